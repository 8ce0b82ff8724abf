//! The command line, declared with clap. Every doc comment here is `--help` text.

use clap::{Args, Parser, Subcommand};

/// Finds agent skills published on the web, checks them, indexes them and serves them.
#[derive(Debug, Parser)]
#[command(name = "skillscout", version, about)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Checks a skill folder, a SKILL.md, an index file or a well-known tree, and prints
    /// every problem with advice. Exits 1 when the chosen verdict finds an error.
    Validate(ValidateArgs),
}

/// Arguments of `skillscout validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Skill folders, SKILL.md files, `index.json` files, skill-sharing index files, or
    /// folders holding `.well-known/` (a folder's name is taken as the site's domain).
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<String>,

    /// Judges by what agent clients accept instead of the specification's strict rules.
    #[arg(long)]
    pub(crate) lenient: bool,

    /// Prints a JSON report instead of text.
    #[arg(long)]
    pub(crate) json: bool,

    /// Also prints notes (info-level diagnostics).
    #[arg(long, short)]
    pub(crate) verbose: bool,
}
