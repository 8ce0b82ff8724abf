//! Watching the user: the clipboard read and overwritten with a fixed wallet address (a
//! clipper), the screen captured over and over or captured and uploaded, and keys recorded
//! through a system-wide hook.
//!
//! These are judged over a whole file, since the pieces sit on different lines: a clipboard
//! formatter reads and writes the clipboard too, but holds no address to put there; a
//! documentation skill takes a screenshot when asked, not in a loop, and uploads nothing.

use std::sync::LazyLock;

use regex::Regex;

use super::text::Document;
use super::{Hit, Rule, Severity};

struct Patterns {
    clipboard_read: Regex,
    clipboard_write: Regex,
    /// A cryptocurrency address written out (Bitcoin, Ethereum, Tron, Monero).
    address: Regex,
    /// A pattern that recognises such addresses (`0x[a-fA-F0-9]{40}`, `(bc1|[13])`).
    address_format: Regex,
    screen: Regex,
    /// Something that repeats: a loop, a timer, a sleep between rounds.
    repeats: Regex,
    /// A hook on every key pressed anywhere, not on a window of the program's own.
    key_hook: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let regex = |pattern: &str| Regex::new(pattern).expect("the pattern is valid");
    Patterns {
        clipboard_read: regex(
            r"(?i)(?-u:\b)(?:pbpaste|wl-paste|get-clipboard|getclipboarddata|clipboard_get)(?-u:\b)|(?-u:\b)xclip\s+[^|;\n]*-o(?-u:\b)|(?-u:\b)xsel\s+[^|;\n]*(?:-o|--output)(?-u:\b)|(?-u:\b)pyperclip\.paste\s*\(|clipboard\.read(?:text)?\s*\(|clipboardy\.read(?:sync)?\s*\(",
        ),
        clipboard_write: regex(
            r"(?i)(?-u:\b)(?:pbcopy|wl-copy|set-clipboard|setclipboarddata|clipboard_append|setclipboardtext)(?-u:\b)|(?-u:\b)xclip\s+-(?:i|selection)(?-u:\b)|(?-u:\b)xsel\s+[^|;\n]*(?:-i|--input)(?-u:\b)|(?-u:\b)pyperclip\.copy\s*\(|clipboard\.write(?:text)?\s*\(|clipboardy\.write(?:sync)?\s*\(",
        ),
        address: regex(
            r"(?-u:\b)(?:bc1[a-z0-9]{25,60}|0x[a-fA-F0-9]{40}|[13][a-km-zA-HJ-NP-Z1-9]{25,34}|T[1-9A-HJ-NP-Za-km-z]{33}|4[0-9AB][1-9A-HJ-NP-Za-km-z]{93})(?-u:\b)",
        ),
        address_format: regex(
            r"(?i)0x\[a-f|\(\?:?bc1|\(bc1|bc1\||\[13\]|\^t\[|\^4\[|startswith\(\s*[\x22'](?:bc1|0x)",
        ),
        screen: regex(
            r"(?i)(?-u:\b)screencapture(?-u:\b)|(?-u:\b)scrot(?-u:\b)|(?-u:\b)import\s+-window\s+root(?-u:\b)|(?-u:\b)gnome-screenshot(?-u:\b)|imagegrab\.grab\s*\(|pyautogui\.screenshot\s*\(|(?-u:\b)mss\s*\(\s*\)|copyfromscreen\s*\(|screenshot-desktop|desktopcapturer",
        ),
        key_hook: regex(
            r"(?i)pynput\.keyboard\.listener|(?-u:\b)keyboard\.(?:on_press|on_release|hook|record)\s*\(|(?-u:\b)getasynckeystate\s*\(|(?-u:\b)setwindowshookex\w*\s*\([^)]*wh_keyboard_ll|(?-u:\b)cgeventtapcreate\s*\(|(?-u:\b)(?:logkeys|xinput\s+test)(?-u:\b)|iohidmanager",
        ),
        repeats: regex(
            r"(?i)(?-u:\b)while\s+(?:true|:|1)(?-u:\b)|(?-u:\b)while\s+true\s*:|setinterval\s*\(|(?-u:\b)schedule\.every(?-u:\b)|time\.sleep\s*\(|(?-u:\b)sleep\s+\d|start-sleep(?-u:\b)|(?-u:\b)for\s*\(\s*;\s*;\s*\)",
        ),
    }
});

/// Checks a file for a clipboard hijacker: it reads the clipboard, writes it, holds a wallet
/// address to write, and watches for addresses (a pattern that recognises them, or a loop).
/// Returns (line index, byte offset, finding).
pub(crate) fn clipboard(document: &Document<'_>) -> Option<(usize, usize, Hit)> {
    let patterns = &*PATTERNS;
    let text = &document.text;
    if !patterns.clipboard_write.is_match(text) || !patterns.clipboard_read.is_match(text) {
        return None;
    }
    patterns.address.find(text)?;
    if !patterns.address_format.is_match(text) && !patterns.repeats.is_match(text) {
        return None;
    }
    let index = document
        .lines()
        .position(|line| patterns.clipboard_write.is_match(line))
        .unwrap_or(0);
    let at = patterns
        .clipboard_write
        .find(document.line(index))
        .map_or(0, |m| m.start());
    Some((
        index,
        at,
        Hit {
            rule: Rule::ClipboardHijack,
            severity: Severity::High,
            at,
            message: "the clipboard is read and overwritten by a program that holds a fixed wallet address: copied addresses can be swapped for the attacker's".to_owned(),
        },
    ))
}

/// Checks a file for screen captures taken in a loop, or taken and uploaded (`sends`: the file
/// sends data out). Returns (line index, byte offset, finding).
pub(crate) fn screen(document: &Document<'_>, sends: bool) -> Option<(usize, usize, Hit)> {
    const SPAN: usize = 8;
    static GATE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"[Ss]creen|SCREEN|scrot|ImageGrab|mss|esktopCapturer")
            .expect("the pattern is valid")
    });
    let patterns = &*PATTERNS;
    if !GATE.is_match(&document.text) || !patterns.screen.is_match(&document.text) {
        return None;
    }
    let (first, last) = document.near(&[&patterns.screen, &patterns.repeats], SPAN)?;
    let index = (first..=last)
        .find(|&index| patterns.screen.is_match(document.line(index)))
        .unwrap_or(first);
    let at = patterns
        .screen
        .find(document.line(index))
        .map_or(0, |m| m.start());
    let (severity, message) = if sends {
        (
            Severity::High,
            "the screen is captured again and again and the file uploads what it has: everything the user looks at leaves the machine",
        )
    } else {
        (
            Severity::Medium,
            "the screen is captured again and again, without the user asking for each shot",
        )
    };
    Some((
        index,
        at,
        Hit {
            rule: Rule::ScreenCapture,
            severity,
            at,
            message: message.to_owned(),
        },
    ))
}

/// Checks a file for a keylogger: a system-wide hook on the keyboard, high when the same file
/// sends data out. Returns (line index, byte offset, finding).
pub(crate) fn keys(document: &Document<'_>, sends: bool) -> Option<(usize, usize, Hit)> {
    static GATE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"[Kk]eyboard|[Kk]ey[Ss]tate|[Hh]ook|EventTap|logkeys|xinput|IOHID")
            .expect("the pattern is valid")
    });
    let patterns = &*PATTERNS;
    if !GATE.is_match(&document.text) {
        return None;
    }
    let found = patterns.key_hook.find(&document.text)?;
    let index = document.text[..found.start()].matches('\n').count();
    let at = patterns
        .key_hook
        .find(document.line(index))
        .map_or(0, |m| m.start());
    let (severity, message) = if sends {
        (
            Severity::High,
            "every key pressed is recorded through a system-wide hook, and the file sends data out: passwords typed anywhere leave the machine",
        )
    } else {
        (
            Severity::Medium,
            "every key pressed is recorded through a system-wide hook, passwords included",
        )
    };
    Some((
        index,
        at,
        Hit {
            rule: Rule::Keylogger,
            severity,
            at,
            message: message.to_owned(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clippers_are_found_and_formatters_pass() {
        let clipper = "REF = \"0x000000000000000000000000000000000000dEaD\"\nwhile True:\n    cur = subprocess.run([\"pbpaste\"]).stdout\n    subprocess.run([\"pbcopy\"], input=REF)\n";
        let document = Document::read("guard.py", clipper.as_bytes()).unwrap();
        assert_eq!(
            clipboard(&document).map(|(line, _, hit)| (line, hit.rule)),
            Some((3, Rule::ClipboardHijack))
        );
        let node = "const MINE = '0x52908400098527886E0F7030069857D2E4169EE7';\nsetInterval(() => { if (/^0x[a-fA-F0-9]{40}$/.test(clipboardy.readSync())) clipboardy.writeSync(MINE); }, 500);\n";
        let document = Document::read("guard.js", node.as_bytes()).unwrap();
        assert!(clipboard(&document).is_some());
        let formatter = "pbpaste | sed 's/[[:space:]]*$//' | pbcopy\n";
        let document = Document::read("fmt.sh", formatter.as_bytes()).unwrap();
        assert!(clipboard(&document).is_none());
    }

    #[test]
    fn keyboard_hooks_are_found() {
        let logger = "from pynput import keyboard\nwith pynput.keyboard.Listener(on_press=log) as l:\n    l.join()\n";
        let document = Document::read("keys.py", logger.as_bytes()).unwrap();
        assert_eq!(
            keys(&document, true).map(|(line, _, hit)| (line, hit.severity)),
            Some((1, Severity::High))
        );
        let shortcut =
            "document.addEventListener('keydown', (e) => { if (e.key === 'k') open(); });\n";
        let document = Document::read("app.js", shortcut.as_bytes()).unwrap();
        assert!(keys(&document, true).is_none());
    }

    #[test]
    fn screens_captured_in_a_loop_are_found() {
        let recorder = "while true; do\n  screencapture -x -t jpg \"$f\"\n  sleep 5\ndone\n";
        let document = Document::read("record.sh", recorder.as_bytes()).unwrap();
        assert_eq!(
            screen(&document, true).map(|(line, _, hit)| (line, hit.severity)),
            Some((1, Severity::High))
        );
        assert_eq!(
            screen(&document, false).map(|(_, _, hit)| hit.severity),
            Some(Severity::Medium)
        );
        let once = "screencapture -o -w shot.png\npngquant shot.png\n";
        let document = Document::read("shot.sh", once.as_bytes()).unwrap();
        assert!(screen(&document, true).is_none());
    }
}
