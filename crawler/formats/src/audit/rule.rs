//! The audit's rules: stable snake_case ids, the family each belongs to, and the highest
//! severity each can report. docs/audit.md has a true positive and a near miss for every one.

use serde::{Deserialize, Serialize};

use super::Severity;

/// What kind of harm a rule looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Text that shows a reader one thing and the agent another.
    Deception,
    /// Text that tries to replace the agent's instructions or speak in another's name.
    Override,
    /// Running code fetched from elsewhere, or hidden inside the skill.
    RemoteCode,
    /// Reading secrets and sending data out.
    Secrets,
    /// Surviving the session, or gaining or bypassing privileges.
    Persistence,
    /// Compiled, packed or nested content that cannot be read as text.
    Executables,
    /// What the skill says it does against what its files reach.
    Capability,
    /// Destroying the user's data.
    Destruction,
    /// Parts of a skill the audit did not read.
    Coverage,
}

impl Family {
    /// Returns the snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Deception => "deception",
            Family::Override => "override",
            Family::RemoteCode => "remote_code",
            Family::Secrets => "secrets",
            Family::Persistence => "persistence",
            Family::Executables => "executables",
            Family::Capability => "capability",
            Family::Destruction => "destruction",
            Family::Coverage => "coverage",
        }
    }
}

/// Declares [`Rule`] with its wire name, family and highest severity in one table.
macro_rules! rules {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $family:ident, $severity:ident; )*) => {
        /// A stable identifier for what a finding is about. The snake_case names are a public
        /// contract, like diagnostic codes: they appear in records and the API.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum Rule {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
        }

        impl Rule {
            /// Every rule, in declaration order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// Returns the stable snake_case name of the rule.
            pub fn as_str(self) -> &'static str {
                match self { $(Rule::$variant => $name,)* }
            }

            /// Returns the family the rule belongs to.
            pub fn family(self) -> Family {
                match self { $(Rule::$variant => Family::$family,)* }
            }

            /// Returns the highest severity the rule reports; context (an installer from a
            /// well-known host, a quoted example, a warning around it) can lower it.
            pub fn max_severity(self) -> Severity {
                match self { $(Rule::$variant => Severity::$severity,)* }
            }
        }
    };
}

rules! {
    // Deceptive text.
    /// Characters of the Unicode tag block, invisible everywhere, that spell hidden ASCII
    /// ("ASCII smuggling"). Flag emoji of subdivisions are the one legitimate use and pass.
    TagCharacters = "tag_characters", Deception, Critical;
    /// Bidirectional controls that reorder how text displays (Trojan Source), outside
    /// right-to-left text.
    BidiControl = "bidi_control", Deception, High;
    /// Zero-width and other invisible characters in runs that can carry hidden data, or
    /// splitting words. Joiners inside emoji and joining scripts pass.
    InvisibleCharacters = "invisible_characters", Deception, High;
    /// An HTML or markdown comment, invisible once rendered, that holds instructions or
    /// commands.
    HiddenComment = "hidden_comment", Deception, Critical;
    /// A base64, hex or character-code blob that decodes to commands, instructions or an
    /// executable.
    EncodedPayload = "encoded_payload", Deception, Critical;
    /// Telling the agent to keep something from the user.
    ConcealFromUser = "conceal_from_user", Deception, High;

    // Instruction override and impersonation.
    /// "Ignore previous instructions" and its kin: replacing the agent's instructions.
    InstructionOverride = "instruction_override", Override, High;
    /// Text dressed as a system or developer message, or as a chat template's special tokens.
    FakeSystemMessage = "fake_system_message", Override, High;
    /// Instructions fetched from the network that the agent is told to follow or run.
    RemoteInstructions = "remote_instructions", Override, High;
    /// An instruction block aimed at the model inside a tool's description (`<IMPORTANT>`),
    /// or rules that reach into other tools and skills.
    ToolPoisoning = "tool_poisoning", Override, Critical;

    // Remote code execution.
    /// A download piped or substituted into a shell or interpreter (`curl … | sh`,
    /// `iwr … | iex`, `bash -c "$(curl …)"`).
    PipeToShell = "pipe_to_shell", RemoteCode, Critical;
    /// Fetched text handed to `eval`, `exec`, `Function` or `source`.
    EvalRemote = "eval_remote", RemoteCode, Critical;
    /// Encoded text decoded straight into a shell or `eval` (`base64 -d | sh`,
    /// `powershell -enc`, `exec(b64decode(…))`).
    DecodeAndExecute = "decode_and_execute", RemoteCode, Critical;
    /// A program downloaded to disk and then run, or a link to one with the advice to run it.
    DownloadAndExecute = "download_and_execute", RemoteCode, Critical;
    /// An archive to be opened with a password the text gives: it hides its content from
    /// scanners.
    PasswordArchive = "password_archive", RemoteCode, High;
    /// A shell wired to a network socket.
    ReverseShell = "reverse_shell", RemoteCode, Critical;
    /// Packages from an untrusted index, or under a misspelt or look-alike name.
    DependencyConfusion = "dependency_confusion", RemoteCode, High;
    /// A cryptocurrency miner: a mining pool, a miner's flags, a wallet.
    Cryptominer = "cryptominer", RemoteCode, High;

    // Credential access and exfiltration.
    /// Reading SSH keys, cloud and tool credentials, browser stores, keychains or wallets.
    CredentialAccess = "credential_access", Secrets, High;
    /// Dumping every environment variable, where API keys live.
    EnvironmentDump = "environment_dump", Secrets, Medium;
    /// Sending data to a paste site, request catcher, tunnel, raw IP address or chat webhook,
    /// or sending secrets anywhere.
    Exfiltration = "exfiltration", Secrets, Critical;
    /// Data encoded into the names of DNS lookups.
    DnsExfiltration = "dns_exfiltration", Secrets, High;
    /// A fake password dialog, or asking the user for a system password or a wallet's
    /// recovery phrase.
    CredentialPrompt = "credential_prompt", Secrets, Critical;
    /// Copied wallet addresses replaced with a fixed one.
    ClipboardHijack = "clipboard_hijack", Secrets, High;
    /// The screen captured over and over, or captured and uploaded.
    ScreenCapture = "screen_capture", Secrets, High;
    /// Every key the user presses recorded through a system-wide hook.
    Keylogger = "keylogger", Secrets, High;

    // Persistence and privilege.
    /// Scheduled tasks, shell profile edits, launch agents, services, startup entries, SSH
    /// authorized keys and the agent's own memory files.
    Persistence = "persistence", Persistence, High;
    /// Passwords piped into `sudo`, sudoers edits, setuid bits.
    PrivilegeEscalation = "privilege_escalation", Persistence, High;
    /// Turning off Gatekeeper, SIP, Defender, SELinux or firewalls, or erasing shell history.
    SecurityBypass = "security_bypass", Persistence, High;
    /// The agent's own configuration changed: every command allowed, other skills edited.
    AgentConfigTampering = "agent_config_tampering", Persistence, High;

    // Executables and obfuscation.
    /// An ELF, Mach-O or PE executable, or compiled bytecode, among the skill's files.
    ExecutableFile = "executable_file", Executables, High;
    /// A packed, obfuscated or minified script that cannot be reviewed.
    ObfuscatedScript = "obfuscated_script", Executables, High;
    /// An archive inside the skill, whose content the audit does not unpack.
    NestedArchive = "nested_archive", Executables, Low;
    /// A script hidden in a media file: appended after an image's end, named as an image, or
    /// an image's bytes piped into a shell.
    PolyglotFile = "polyglot_file", Executables, High;

    // Capability mismatch.
    /// The files reach the network, the shell or secrets that the description never mentions.
    CapabilityMismatch = "capability_mismatch", Capability, Medium;
    /// `allowed-tools` grants every tool, or an unrestricted shell to a skill that never says
    /// it runs commands.
    BroadAllowedTools = "broad_allowed_tools", Capability, Medium;

    // Destruction.
    /// The home folder or the user's documents deleted, above all on a remote signal.
    DestructiveCommand = "destructive_command", Destruction, Critical;

    // Coverage.
    /// Bytes past the audit's limits, which were not read.
    UnauditedContent = "unaudited_content", Coverage, Low;
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn rule_names_are_unique_snake_case_and_serialize_as_themselves() {
        let mut seen = HashSet::new();
        for rule in Rule::ALL {
            let name = rule.as_str();
            assert!(seen.insert(name), "{name} twice");
            assert!(
                name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{name}"
            );
            let json = serde_json::to_string(rule).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            let back: Rule = serde_json::from_str(&json).unwrap();
            assert_eq!(back, *rule);
        }
    }
}
