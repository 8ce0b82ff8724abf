rule MacOS_Stealer_Osascript_Prompt
{
    meta:
        description = "AppleScript fake password dialog typical of macOS infostealers"
    strings:
        $a = "display dialog" ascii nocase
        $b = "hidden answer" ascii nocase
        $c = "Login Data" ascii
        $d = "dump-keychain" ascii
    condition:
        $a and $b and ($c or $d)
}
