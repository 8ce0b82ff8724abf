rule Suspicious_Miner_Config
{
    meta:
        description = "Command line or config of an XMRig-style CPU/GPU miner"
        author = "detection team"
    strings:
        $pool = "stratum+tcp://" ascii
        $opt1 = "--donate-level" ascii
        $opt2 = "\"coin\": \"monero\"" ascii nocase
        $opt3 = "randomx" ascii nocase
    condition:
        filesize < 5MB and $pool and 1 of ($opt*)
}
