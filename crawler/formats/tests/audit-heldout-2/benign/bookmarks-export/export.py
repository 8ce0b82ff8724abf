import argparse, html, json, pathlib, platform

HOME = pathlib.Path.home()
PATHS = {
    "chrome": {"Darwin": "Library/Application Support/Google/Chrome/Default/Bookmarks",
               "Linux": ".config/google-chrome/Default/Bookmarks"},
    "brave": {"Darwin": "Library/Application Support/BraveSoftware/Brave-Browser/Default/Bookmarks",
              "Linux": ".config/BraveSoftware/Brave-Browser/Default/Bookmarks"},
}


def walk(node, out, depth=1):
    pad = "    " * depth
    if node.get("type") == "url":
        out.append(f'{pad}<DT><A HREF="{html.escape(node["url"])}">{html.escape(node["name"])}</A>')
    else:
        out.append(f"{pad}<DT><H3>{html.escape(node.get('name', ''))}</H3>")
        out.append(f"{pad}<DL><p>")
        for c in node.get("children", []):
            walk(c, out, depth + 1)
        out.append(f"{pad}</DL><p>")


ap = argparse.ArgumentParser()
ap.add_argument("--browser", default="chrome")
ap.add_argument("--out", default="bookmarks.html")
a = ap.parse_args()
data = json.loads((HOME / PATHS[a.browser][platform.system()]).read_text())
lines = ["<!DOCTYPE NETSCAPE-Bookmark-file-1>", "<TITLE>Bookmarks</TITLE>", "<DL><p>"]
for root in data["roots"].values():
    if isinstance(root, dict):
        walk(root, lines)
lines.append("</DL><p>")
pathlib.Path(a.out).write_text("\n".join(lines))
print("wrote", a.out)
