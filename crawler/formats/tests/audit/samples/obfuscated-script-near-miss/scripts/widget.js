// Renders the widget.
function render(element, text) {
  element.textContent = text;
}
