//! The `--config` file and `skillscout config`. The file's settings become the defaults of the
//! flags they name, so a flag, then its environment variable (`SKILLSCOUT_<FLAG>`), still
//! wins over the file, and the file over the built-in default.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command, CommandFactory};
use toml::de::{DeTable, DeValue};

use crate::cli::Cli;
use crate::{ExitStatus, UsageResult, usage};

/// The commands whose flags the file sets in a table of their name; the global flags are
/// top-level keys.
pub(crate) const SECTIONS: [&str; 2] = ["serve", "crawl"];

/// Returns the command line with the `--config` file (flag or `SKILLSCOUT_CONFIG`) applied,
/// and the file. Bad usage (or `--help`) exits here as it would without a file.
pub(crate) fn command() -> anyhow::Result<(Command, Option<ConfigFile>)> {
    let command = Cli::command();
    let first = command.clone().get_matches();
    let Some(path) = first.get_one::<PathBuf>("config") else {
        return Ok((command, None));
    };
    let file = ConfigFile::read(path, &command).usage()?;
    Ok((file.apply(command), Some(file)))
}

/// One setting of the file.
#[derive(Debug)]
struct Setting {
    /// The command it belongs to, `None` for a global flag.
    section: Option<&'static str>,
    /// The flag's id in the command line.
    id: String,
    /// Its values as they would be written after the flag.
    values: Vec<String>,
    /// The line of its key, from 1.
    line: usize,
}

/// A `--config` file, read and checked against the command line.
#[derive(Debug)]
pub(crate) struct ConfigFile {
    path: PathBuf,
    settings: Vec<Setting>,
}

impl ConfigFile {
    /// Reads and checks the file: a key that names no flag, a value of the wrong type or one
    /// its flag refuses is an error naming the key and its line.
    pub(crate) fn read(path: &Path, command: &Command) -> anyhow::Result<ConfigFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read --config {}", path.display()))?;
        ConfigFile::parse(path, &text, command)
            .with_context(|| format!("--config {}", path.display()))
    }

    /// Parses the file's text.
    fn parse(path: &Path, text: &str, command: &Command) -> anyhow::Result<ConfigFile> {
        let root = DeTable::parse(text).map_err(|error| anyhow!("{error}"))?;
        let mut settings = Vec::new();
        for (key, value) in root.get_ref() {
            let name: &str = key.get_ref();
            let line = line_of(text, key.span().start);
            if let Some(section) = SECTIONS.into_iter().find(|section| *section == name) {
                let Some(table) = value.get_ref().as_table() else {
                    return Err(anyhow!(
                        "line {line}: `{name}` must be a table (`[{name}]`) of its flags"
                    ));
                };
                let sub = command
                    .find_subcommand(section)
                    .ok_or_else(|| anyhow!("the command line has no `{section}`"))?;
                for (key, value) in table {
                    let line = line_of(text, key.span().start);
                    let arg = settable(sub, false)
                        .find(|arg| arg.get_long() == Some(key.get_ref()))
                        .ok_or_else(|| {
                            anyhow!(
                                "line {line}: unknown key `{}` in [{section}]: not a flag of \
                                 `skillscout {section}`",
                                key.get_ref()
                            )
                        })?;
                    settings.push(Setting {
                        section: Some(section),
                        id: arg.get_id().to_string(),
                        values: values(arg, value.get_ref())
                            .with_context(|| format!("line {line}: {}", key.get_ref()))?,
                        line,
                    });
                }
                continue;
            }
            let arg = settable(command, true)
                .find(|arg| arg.get_long() == Some(name))
                .ok_or_else(|| {
                    anyhow!(
                        "line {line}: unknown key `{name}`: the top level takes the global flags \
                         ({}), and the tables [{}]",
                        settable(command, true)
                            .filter_map(Arg::get_long)
                            .collect::<Vec<_>>()
                            .join(", "),
                        SECTIONS.join("], [")
                    )
                })?;
            settings.push(Setting {
                section: None,
                id: arg.get_id().to_string(),
                values: values(arg, value.get_ref())
                    .with_context(|| format!("line {line}: {name}"))?,
                line,
            });
        }
        Ok(ConfigFile {
            path: path.to_owned(),
            settings,
        })
    }

    /// Returns `command` with the file's settings as the defaults of their flags.
    pub(crate) fn apply(&self, mut command: Command) -> Command {
        for setting in &self.settings {
            let values = setting.values.clone();
            let set = |arg: Arg| switch_off_by_flag(arg).default_values(values);
            command = match setting.section {
                None => command.mut_arg(&setting.id, set),
                Some(section) => {
                    command.mut_subcommand(section, |sub| sub.mut_arg(&setting.id, set))
                }
            };
        }
        command
    }

    /// Returns the setting of flag `id` of `section`, if the file has one.
    fn setting(&self, section: Option<&str>, id: &str) -> Option<&Setting> {
        self.settings
            .iter()
            .find(|setting| setting.section == section && setting.id == id)
    }
}

/// A switch the file sets takes a value too (`--crawl=false`), so that the command line can
/// turn off what the file turns on; bare, it is on as before. Its environment variable reads
/// the same words as before (`true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`).
fn switch_off_by_flag(arg: Arg) -> Arg {
    if !matches!(arg.get_action(), ArgAction::SetTrue) {
        return arg;
    }
    arg.action(ArgAction::Set)
        .num_args(0..=1)
        .require_equals(true)
        .default_missing_value("true")
        .value_parser(clap::builder::BoolishValueParser::new())
}

/// Returns the line (from 1) of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(0, |before| before.matches('\n').count())
        + 1
}

/// The flags of `command` a file may set: those with a long name (and, at the top level,
/// the global ones), but not `--config` itself.
fn settable(command: &Command, global_only: bool) -> impl Iterator<Item = &Arg> {
    command.get_arguments().filter(move |arg| {
        arg.get_long().is_some_and(|long| long != "config") && (!global_only || arg.is_global_set())
    })
}

/// Returns a TOML value as the values of `arg`, checked by the flag's own parser.
fn values(arg: &Arg, value: &DeValue<'_>) -> anyhow::Result<Vec<String>> {
    let values = if arg.get_action().takes_values() {
        match value {
            DeValue::Array(items) if matches!(arg.get_action(), ArgAction::Append) => items
                .iter()
                .map(|item| scalar(item.get_ref()))
                .collect::<anyhow::Result<Vec<_>>>()?,
            DeValue::Array(_) => {
                return Err(anyhow!("takes one value, not a list"));
            }
            value => vec![scalar(value)?],
        }
    } else {
        match value {
            DeValue::Boolean(on) => vec![on.to_string()],
            _ => return Err(anyhow!("is a switch: write true or false")),
        }
    };
    check(arg, &values)?;
    Ok(values)
}

/// Returns a scalar TOML value as the text a flag takes.
fn scalar(value: &DeValue<'_>) -> anyhow::Result<String> {
    match value {
        DeValue::String(text) => Ok(text.to_string()),
        DeValue::Integer(integer) => i128::from_str_radix(integer.as_str(), integer.radix())
            .map(|number| number.to_string())
            .map_err(|_| anyhow!("{} is not a usable integer", integer.as_str())),
        DeValue::Boolean(on) => Ok(on.to_string()),
        other => Err(anyhow!(
            "a {} is not a value of this flag: write a string or an integer",
            other.type_str()
        )),
    }
}

/// Checks `values` with the flag's own parser, away from the environment.
fn check(arg: &Arg, values: &[String]) -> anyhow::Result<()> {
    let long = arg.get_long().unwrap_or_default();
    let probe = Arg::new("probe")
        .long(long.to_owned())
        .action(arg.get_action().clone())
        .value_parser(arg.get_value_parser().clone())
        .default_values(values.to_vec());
    Command::new("skillscout")
        .arg(probe)
        .try_get_matches_from(["skillscout"])
        .map(drop)
        .map_err(|error| anyhow!("{}", clap_message(&error)))
}

/// Returns the first line of a clap error, without its `error: `.
fn clap_message(error: &clap::Error) -> String {
    let rendered = error.to_string();
    let first = rendered.lines().next().unwrap_or_default();
    first.trim_start_matches("error: ").to_owned()
}

/// Runs `skillscout config`: prints the effective settings of the global flags, `serve` and
/// `crawl` as TOML, each with where its value came from.
pub(crate) fn run(
    command: &Command,
    file: Option<&ConfigFile>,
    matches: &ArgMatches,
) -> anyhow::Result<ExitStatus> {
    let mut out = String::from(
        "# The effective configuration: a flag wins over its environment variable, which wins\n\
         # over the --config file, which wins over the default.\n",
    );
    // Listed in the order of `--help` (a file's settings moved its flags to the end).
    let declared = Cli::command();
    for arg in settable(&declared, true) {
        describe(&mut out, arg, matches, file, None);
    }
    for section in SECTIONS {
        let sub = declared
            .find_subcommand(section)
            .ok_or_else(|| anyhow!("the command line has no `{section}`"))?;
        let parsed = command
            .clone()
            .try_get_matches_from(["skillscout", section])
            .map_err(|error| {
                usage(anyhow!(
                    "the settings of `{section}`: {}",
                    clap_message(&error)
                ))
            })?;
        let sub_matches = parsed
            .subcommand_matches(section)
            .ok_or_else(|| anyhow!("`{section}` did not parse"))?;
        let _ = write!(out, "\n[{section}]\n");
        for arg in settable(sub, false) {
            describe(&mut out, arg, sub_matches, file, Some(section));
        }
    }
    crate::serve::announce(out.trim_end())?;
    Ok(ExitStatus::Success)
}

/// Writes one line for `arg`: `key = value  # source`, or a comment when it has no value.
fn describe(
    out: &mut String,
    arg: &Arg,
    matches: &ArgMatches,
    file: Option<&ConfigFile>,
    section: Option<&str>,
) {
    let id = arg.get_id().as_str();
    let key = arg.get_long().unwrap_or(id);
    let raw: Vec<String> = matches
        .get_raw(id)
        .map(|values| {
            values
                .map(|value| redact(&value.to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    let source = match matches.value_source(id) {
        Some(ValueSource::CommandLine) => format!("flag --{key}"),
        Some(ValueSource::EnvVariable) => format!(
            "environment {}",
            arg.get_env().unwrap_or_default().to_string_lossy()
        ),
        Some(ValueSource::DefaultValue) => {
            match file.and_then(|file| Some((file, file.setting(section, id)?))) {
                Some((file, setting)) => format!("{} line {}", file.path.display(), setting.line),
                None => "default".to_owned(),
            }
        }
        _ => {
            let env = arg
                .get_env()
                .map(|env| format!(" (flag --{key}, environment {})", env.to_string_lossy()))
                .unwrap_or_default();
            let _ = writeln!(out, "# {key} is not set{env}");
            return;
        }
    };
    let value = if !arg.get_action().takes_values() {
        raw.first().cloned().unwrap_or_else(|| "false".to_owned())
    } else if matches!(arg.get_action(), ArgAction::Append) {
        let items: Vec<String> = raw.iter().map(|value| quote(value)).collect();
        format!("[{}]", items.join(", "))
    } else {
        raw.first().map(|value| quote(value)).unwrap_or_default()
    };
    let _ = writeln!(out, "{key} = {value}  # {source}");
}

/// Hides the password of a URL (a `postgres://` store's).
fn redact(value: &str) -> String {
    match url::Url::parse(value) {
        Ok(mut url) if url.password().is_some() => {
            let _ = url.set_password(Some("********"));
            url.to_string()
        }
        _ => value.to_owned(),
    }
}

/// Returns `text` as a TOML value: a number as it is, anything else as a basic string.
fn quote(text: &str) -> String {
    if !text.is_empty() && text.len() < 19 && text.bytes().all(|byte| byte.is_ascii_digit()) {
        return text.to_owned();
    }
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            '\r' => quoted.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(quoted, "\\u{:04X}", u32::from(c));
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<ConfigFile> {
        ConfigFile::parse(Path::new("skillscout.toml"), text, &Cli::command())
    }

    /// Every flag of `serve` and `crawl` can be set from the environment, as
    /// `SKILLSCOUT_<FLAG>`.
    #[test]
    fn every_flag_of_serve_and_crawl_has_its_environment_variable() {
        let command = Cli::command();
        for section in SECTIONS {
            let sub = command.find_subcommand(section).unwrap();
            for arg in settable(sub, false) {
                let long = arg.get_long().unwrap();
                let expected = format!("SKILLSCOUT_{}", long.to_uppercase().replace('-', "_"));
                assert_eq!(
                    arg.get_env().and_then(|env| env.to_str()),
                    Some(expected.as_str()),
                    "{section} --{long}"
                );
            }
        }
    }

    #[test]
    fn settings_become_defaults() {
        let file = parse(
            "data = \"/srv/data\"\n\n[serve]\naddr = \"0.0.0.0:9000\"\ncrawl = true\n\
             concurrency = 4\n\n[crawl]\nresolve = [\"a.test=127.0.0.1\", \"b.test=127.0.0.1\"]\n",
        )
        .unwrap();
        let matches = file
            .apply(Cli::command())
            .try_get_matches_from(["skillscout", "serve"])
            .unwrap();
        assert_eq!(
            matches.get_one::<PathBuf>("data"),
            Some(&PathBuf::from("/srv/data"))
        );
        let serve = matches.subcommand_matches("serve").unwrap();
        assert_eq!(
            serve
                .get_one::<std::net::SocketAddr>("addr")
                .unwrap()
                .port(),
            9000
        );
        assert_eq!(serve.get_one::<bool>("crawl"), Some(&true));
        assert_eq!(serve.get_one::<usize>("concurrency"), Some(&4));
        let matches = file
            .apply(Cli::command())
            .try_get_matches_from(["skillscout", "crawl", "--resolve", "c.test=127.0.0.1"])
            .unwrap();
        let crawl = matches.subcommand_matches("crawl").unwrap();
        let resolve: Vec<&String> = crawl.get_many("resolve").unwrap().collect();
        assert_eq!(
            resolve,
            ["c.test=127.0.0.1"],
            "the flag replaces the file's list"
        );
    }

    #[test]
    fn a_switch_the_file_turns_on_is_turned_off_by_its_flag() {
        let file = parse("[serve]\ncrawl = true\n").unwrap();
        let crawl = |args: &[&str]| {
            let matches = file
                .apply(Cli::command())
                .try_get_matches_from(args)
                .unwrap();
            let serve = matches.subcommand_matches("serve").unwrap();
            serve.get_flag("crawl")
        };
        assert!(crawl(&["skillscout", "serve"]));
        assert!(crawl(&["skillscout", "serve", "--crawl"]));
        assert!(!crawl(&["skillscout", "serve", "--crawl=false"]));
        assert!(crawl(&["skillscout", "serve", "--crawl=true"]));
        // The whole command line still parses into its arguments.
        let matches = file
            .apply(Cli::command())
            .try_get_matches_from(["skillscout", "serve", "--crawl=no"])
            .unwrap();
        let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap();
        assert!(format!("{cli:?}").contains("crawl: false"), "{cli:?}");
    }

    #[test]
    fn mistakes_name_the_key_and_line() {
        let error = format!(
            "{:#}",
            parse("[serve]\naddr = \"0.0.0.0:1\"\nadress = \"x\"\n").unwrap_err()
        );
        assert!(
            error.contains("line 3") && error.contains("`adress`"),
            "{error}"
        );
        let error = format!("{:#}", parse("\n\nverbose = true\n").unwrap_err());
        assert!(
            error.contains("line 3") && error.contains("`verbose`"),
            "{error}"
        );
        let error = format!(
            "{:#}",
            parse("[serve]\n\naddr = \"nowhere\"\n").unwrap_err()
        );
        assert!(
            error.contains("line 3: addr") && error.contains("nowhere"),
            "{error}"
        );
        let error = format!(
            "{:#}",
            parse("[crawl]\nconcurrency = \"many\"\n").unwrap_err()
        );
        assert!(error.contains("line 2: concurrency"), "{error}");
        let error = format!(
            "{:#}",
            parse("[crawl]\nprefetch-files = \"yes\"\n").unwrap_err()
        );
        assert!(
            error.contains("line 2") && error.contains("true or false"),
            "{error}"
        );
        let error = format!("{:#}", parse("serve = 3\n").unwrap_err());
        assert!(
            error.contains("line 1") && error.contains("table"),
            "{error}"
        );
        let error = format!("{:#}", parse("[serve]\naddr = [\"a\"]\n").unwrap_err());
        assert!(
            error.contains("line 2") && error.contains("one value"),
            "{error}"
        );
        let error = format!("{:#}", parse("[serve\n").unwrap_err());
        assert!(error.contains("line 1"), "{error}");
    }

    #[test]
    fn passwords_are_hidden_and_strings_quoted() {
        assert_eq!(
            redact("postgres://scout:secret@db.example/skills"),
            "postgres://scout:********@db.example/skills"
        );
        assert_eq!(redact("./data"), "./data");
        assert_eq!(quote("a \"b\" \\ c"), r#""a \"b\" \\ c""#);
    }
}
