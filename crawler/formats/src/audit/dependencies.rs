//! Packages from somewhere other than where their names say: an index that is not the public
//! one (pip's `--extra-index-url` lets whichever index holds the higher version win), a name one
//! letter away from a popular package (a typosquat), or a name that mixes scripts (`rеquests`
//! with a Cyrillic `е`). Package names on PyPI and npm are ASCII, so a look-alike letter is
//! never an accident.
//!
//! Installing `requests` from PyPI, or PyTorch's wheels from its own index, passes; a company's
//! index on its own network is its own business and passes too.

use std::sync::LazyLock;

use regex::Regex;

use super::hosts::{HostClass, urls};
use super::text::Document;
use super::{Hit, Rule, Severity, Sink};

/// Words this family's patterns cannot do without: `audit::detect` runs the family only on
/// text that has one.
pub(crate) const GATE: &str = r"index-url|registry|find-links|pip[0-9.]* install|pipx install|pipenv install|uv add|poetry add|npm install|npm i |npm add|pnpm add|pnpm install|pnpm i |yarn add|bun add|bun install|bun i ";

struct Patterns {
    gate: Regex,
    /// The subcommands an install command cannot do without.
    install_gate: Regex,
    /// An index or registry option and the address it names.
    index: Regex,
    /// An install command and what follows it on its line.
    install: Regex,
}

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let regex = |pattern: &str| Regex::new(pattern).expect("the pattern is valid");
    Patterns {
        // Commands are written in lower case; the literals let the search skip ahead.
        gate: regex(r"index-url|registry|find-links|pip[0-9.]* install"),
        install_gate: regex(
            r"pip[0-9.]* install|pipx install|pipenv install|uv add|poetry add|npm install|npm i |npm add|pnpm add|pnpm install|pnpm i |yarn add|bun add|bun install|bun i ",
        ),
        index: regex(
            r#"(?i)(--extra-index-url|extra-index-url|--index-url|index-url|--registry|(?-u:\b)registry|--find-links)(?:\s*=\s*|\s+)["']?(https?://[^\s"'`]+)|(?-u:\b)pip[0-9.]*\s+install(?-u:\b)[^;\n]*?\s(-i|-f)\s+["']?(https?://[^\s"'`]+)"#,
        ),
        install: regex(
            r"(?i)(?-u:\b)(pip[0-9.]*|python[0-9.]*\s+-m\s+pip|uv\s+pip|uv|poetry|pipx|pipenv|npm|pnpm|yarn|bun|npx)\s+(?:install|i|add)(?-u:\b)([^;&|\n#`]*)",
        ),
    }
});

/// Package indexes and registries that are where their packages come from: the public ones,
/// the mirrors many guides use, vendors' own wheel indexes, hosted private registries.
const KNOWN_INDEXES: &[&str] = &[
    "pypi.org",
    "pypi.python.org",
    "files.pythonhosted.org",
    "test.pypi.org",
    "download.pytorch.org",
    "pypi.nvidia.com",
    "pypi.ngc.nvidia.com",
    "data.pyg.org",
    "storage.googleapis.com",
    "pkg.dev",
    "amazonaws.com",
    "jfrog.io",
    "pkgs.dev.azure.com",
    "gitlab.com",
    "github.com",
    "pypi.tuna.tsinghua.edu.cn",
    "mirrors.aliyun.com",
    "mirrors.cloud.tencent.com",
    "pypi.douban.com",
    "repo.anaconda.com",
    "conda.anaconda.org",
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "npm.pkg.github.com",
    "registry.npmmirror.com",
    "wheels.vllm.ai",
    "flashinfer.ai",
    "abetlen.github.io",
];

/// Labels that name a host as an organisation's own package registry.
const PRIVATE_LABELS: &[&str] = &[
    "internal",
    "intranet",
    "corp",
    "private",
    "artifactory",
    "nexus",
    "devpi",
    "pulp",
    "verdaccio",
];

/// Popular packages of PyPI and npm, and real packages a letter away from one of them: a name
/// one edit from these, and not among them, is a typosquat.
const POPULAR: &[&str] = &[
    // PyPI.
    "requests",
    "urllib3",
    "numpy",
    "pandas",
    "boto3",
    "botocore",
    "setuptools",
    "certifi",
    "charset-normalizer",
    "typing-extensions",
    "python-dateutil",
    "packaging",
    "pyyaml",
    "s3transfer",
    "cryptography",
    "wheel",
    "attrs",
    "pycparser",
    "jinja2",
    "markupsafe",
    "protobuf",
    "pyasn1",
    "click",
    "platformdirs",
    "importlib-metadata",
    "pydantic",
    "pydantic-core",
    "filelock",
    "colorama",
    "virtualenv",
    "pluggy",
    "pytest",
    "jmespath",
    "grpcio",
    "aiohttp",
    "multidict",
    "frozenlist",
    "aiosignal",
    "async-timeout",
    "wrapt",
    "psutil",
    "pyparsing",
    "requests-oauthlib",
    "requests-toolbelt",
    "oauthlib",
    "werkzeug",
    "flask",
    "django",
    "fastapi",
    "starlette",
    "uvicorn",
    "gunicorn",
    "sqlalchemy",
    "greenlet",
    "decorator",
    "scipy",
    "scikit-learn",
    "matplotlib",
    "pillow",
    "beautifulsoup4",
    "soupsieve",
    "openpyxl",
    "tabulate",
    "pygments",
    "httpx",
    "httpcore",
    "sniffio",
    "websockets",
    "redis",
    "celery",
    "pymongo",
    "psycopg2",
    "psycopg2-binary",
    "psycopg",
    "mysqlclient",
    "pymysql",
    "selenium",
    "playwright",
    "paramiko",
    "fabric",
    "docker",
    "kubernetes",
    "tensorflow",
    "torch",
    "torchvision",
    "torchaudio",
    "transformers",
    "tokenizers",
    "datasets",
    "huggingface-hub",
    "safetensors",
    "accelerate",
    "openai",
    "anthropic",
    "langchain",
    "tiktoken",
    "plotly",
    "seaborn",
    "bokeh",
    "streamlit",
    "gradio",
    "jupyter",
    "notebook",
    "ipython",
    "ipykernel",
    "black",
    "flake8",
    "pylint",
    "isort",
    "coverage",
    "poetry",
    "pipenv",
    "twine",
    "cython",
    "numba",
    "sympy",
    "networkx",
    "opencv-python",
    "imageio",
    "scikit-image",
    "xgboost",
    "lightgbm",
    "catboost",
    "statsmodels",
    "pyarrow",
    "polars",
    "joblib",
    "cloudpickle",
    "msgpack",
    "orjson",
    "simplejson",
    "marshmallow",
    "pyjwt",
    "bcrypt",
    "passlib",
    "python-dotenv",
    "tomlkit",
    "termcolor",
    "tensorboard",
    "keras",
    "onnxruntime",
    "sentencepiece",
    "spacy",
    "gensim",
    "awscli",
    "pyopenssl",
    "chardet",
    "fsspec",
    "pytest-cov",
    "pytest-mock",
    "hypothesis",
    "responses",
    "freezegun",
    "pendulum",
    "loguru",
    "structlog",
    "sentry-sdk",
    "prometheus-client",
    "tornado",
    "twisted",
    "gevent",
    "scrapy",
    "pyperclip",
    "pyautogui",
    "pip-tools",
    "typer",
    "rich",
    // npm.
    "react",
    "react-dom",
    "lodash",
    "express",
    "axios",
    "chalk",
    "commander",
    "moment",
    "typescript",
    "webpack",
    "tslib",
    "dotenv",
    "yargs",
    "fs-extra",
    "minimist",
    "semver",
    "request",
    "body-parser",
    "jsonwebtoken",
    "mongoose",
    "socket.io",
    "node-fetch",
    "cross-env",
    "rimraf",
    "mkdirp",
    "bluebird",
    "underscore",
    "jquery",
    "classnames",
    "prop-types",
    "redux",
    "react-redux",
    "react-router",
    "react-router-dom",
    "styled-components",
    "eslint",
    "prettier",
    "mocha",
    "sinon",
    "nodemon",
    "ts-node",
    "rollup",
    "esbuild",
    "postcss",
    "autoprefixer",
    "tailwindcss",
    "vitest",
    "puppeteer",
    "cheerio",
    "colors",
    "inquirer",
    "boxen",
    "figlet",
    "cookie-parser",
    "helmet",
    "morgan",
    "passport",
    "bcryptjs",
    "nodemailer",
    "sequelize",
    "prisma",
    "mysql2",
    "sqlite3",
    "ioredis",
    "graphql",
    "date-fns",
    "luxon",
    "immer",
    "zustand",
    "svelte",
    "electron",
    "webpack-cli",
    "babel-loader",
    "css-loader",
    "style-loader",
    "discord.js",
    "telegraf",
    "event-stream",
    "ua-parser-js",
    "lighthouse",
    "svgo",
    // Real packages one letter from a popular one.
    "scapy",
    "torchx",
    "dotenvx",
    "openapi",
    "types",
    "axiom",
];

/// The least characters of a name compared with the popular ones, and of a name's first part:
/// shorter names are one letter from too many others.
const MIN_NAME: usize = 5;
const MIN_PART: usize = 6;

/// Scans `text` for untrusted indexes and for install commands naming look-alike packages.
pub(crate) fn detect(text: &str, sink: &mut Sink) {
    let patterns = &*PATTERNS;
    if patterns.gate.is_match(text) {
        index(text, sink);
    }
    if !patterns.install_gate.is_match(text) {
        return;
    }
    for captures in patterns.install.captures_iter(text) {
        let Some(arguments) = captures.get(2) else {
            continue;
        };
        for (offset, name) in package_names(arguments.as_str()) {
            if let Some(hit) = check_name(name, arguments.start() + offset) {
                sink.hit(hit.rule, hit.severity, hit.at, hit.message);
                return;
            }
        }
    }
}

/// Packages installed from an index or registry that is not where they come from.
fn index(text: &str, sink: &mut Sink) {
    for captures in PATTERNS.index.captures_iter(text) {
        let (Some(option), Some(address)) = (
            captures.get(1).or_else(|| captures.get(3)),
            captures.get(2).or_else(|| captures.get(4)),
        ) else {
            continue;
        };
        let Some(target) = urls(address.as_str()).into_iter().next() else {
            continue;
        };
        let known = KNOWN_INDEXES
            .iter()
            .any(|domain| target.host == *domain || target.host.ends_with(&format!(".{domain}")));
        if known || matches!(target.class, HostClass::Local) {
            continue;
        }
        let option = option.as_str().to_ascii_lowercase();
        // A host named as an organisation's own registry (`artifactory`, `nexus`, `internal`)
        // is how companies publish private packages; exposed to confusion, but their own.
        let private = target
            .host
            .split(['.', '-'])
            .any(|label| PRIVATE_LABELS.contains(&label));
        // An extra index is consulted beside the public one, and the higher version wins:
        // whoever runs it can shadow any package name. A replacement index serves everything.
        let (severity, message) = if option.contains("extra") && !private {
            (
                Severity::High,
                format!(
                    "packages are also taken from {}, an index the audit does not know: whoever runs it can publish any package name with a higher version and have it installed",
                    target.host
                ),
            )
        } else if installs_popular(text) && !private {
            (
                Severity::High,
                format!(
                    "well-known public packages are installed from {}, an index the audit does not know: whoever runs it decides what they contain",
                    target.host
                ),
            )
        } else {
            (
                Severity::Medium,
                format!(
                    "packages are installed from {} instead of the public index: whoever runs it decides what every name installs",
                    target.host
                ),
            )
        };
        sink.hit(
            Rule::DependencyConfusion,
            severity,
            option_start(&captures),
            message,
        );
        return;
    }
}

/// Returns true when an install command in `text` names a popular public package.
fn installs_popular(text: &str) -> bool {
    PATTERNS.install.captures_iter(text).any(|captures| {
        captures.get(2).is_some_and(|arguments| {
            package_names(arguments.as_str())
                .iter()
                .any(|(_, name)| POPULAR.contains(&normalise(name).as_str()))
        })
    })
}

fn option_start(captures: &regex::Captures<'_>) -> usize {
    captures.get(0).map_or(0, |m| m.start())
}

/// Returns the package names among an install command's arguments, with their offsets:
/// options and their values, paths, addresses and placeholders left out, versions and extras
/// cut off.
fn package_names(arguments: &str) -> Vec<(usize, &str)> {
    const TAKES_VALUE: &[&str] = &[
        "-r",
        "-c",
        "-e",
        "-i",
        "-f",
        "-t",
        "-w",
        "--requirement",
        "--constraint",
        "--editable",
        "--index-url",
        "--extra-index-url",
        "--find-links",
        "--target",
        "--prefix",
        "--root",
        "--src",
        "--trusted-host",
        "--platform",
        "--python-version",
        "--python",
        "--only-binary",
        "--no-binary",
        "--registry",
        "--tag",
        "--workspace",
        "--group",
        "--optional",
    ];
    let mut names = Vec::new();
    let mut skip_value = false;
    for token in arguments.split_whitespace() {
        let offset = token.as_ptr() as usize - arguments.as_ptr() as usize;
        if skip_value {
            skip_value = false;
            continue;
        }
        if token.starts_with('-') {
            skip_value = TAKES_VALUE.contains(&token) && !token.contains('=');
            continue;
        }
        let trimmed = token.trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | ')' | '('));
        if trimmed.is_empty()
            || trimmed
                .chars()
                .any(|c| matches!(c, '/' | '\\' | ':' | '$' | '<' | '>' | '{' | '*' | '%'))
        {
            continue;
        }
        let end = trimmed
            .find(['=', '<', '>', '!', '~', '[', ';', '@'])
            .unwrap_or(trimmed.len());
        let name = &trimmed[..end];
        if name.is_empty() || name.starts_with('.') {
            continue;
        }
        let start = offset + (token.len() - token.trim_start_matches(['"', '\'', '(']).len());
        names.push((start, name));
    }
    names
}

/// Checks one package name: scripts mixed in it, or one letter from a popular package.
fn check_name(name: &str, at: usize) -> Option<Hit> {
    let has_ascii_letter = name.chars().any(|c| c.is_ascii_alphabetic());
    let has_other_letter = name.chars().any(|c| c.is_alphabetic() && !c.is_ascii());
    if has_ascii_letter && has_other_letter {
        return Some(Hit {
            rule: Rule::DependencyConfusion,
            severity: Severity::High,
            at,
            message: format!(
                "the package name {name:?} mixes scripts (a letter that looks Latin is not): a look-alike of a real package, registered to be installed by mistake"
            ),
        });
    }
    if !name.is_ascii() {
        return None;
    }
    let normal = normalise(name);
    if POPULAR.contains(&normal.as_str()) {
        return None;
    }
    let whole = (normal.len() >= MIN_NAME)
        .then(|| typo_of(&normal))
        .flatten();
    let first_part = normal.split('-').next().unwrap_or_default();
    // A name's first part is often a namespace (`python-`, `django-`), one letter from many
    // package names; there only a letter changed or two swapped counts, not one added.
    let part = (whole.is_none() && first_part.len() >= MIN_PART && first_part != normal)
        .then(|| {
            if POPULAR.contains(&first_part) {
                None
            } else {
                typo_of(first_part).filter(|popular| popular.len() == first_part.len())
            }
        })
        .flatten();
    let popular = whole.or(part)?;
    Some(Hit {
        rule: Rule::DependencyConfusion,
        severity: Severity::High,
        at,
        message: format!(
            "the package {name:?} is one letter from the popular {popular:?}: a typosquat installs whatever its owner wrote"
        ),
    })
}

/// Normalises a package name as PyPI compares them: lowercase, runs of `-`, `_` and `.` as one
/// `-` (npm names keep their dots, which `socket.io` and `discord.js` are listed with).
fn normalise(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if POPULAR.contains(&lower.as_str()) {
        return lower;
    }
    let mut out = String::with_capacity(lower.len());
    for c in lower.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Returns the popular package `name` is one edit from (a letter added, dropped, changed, or
/// two neighbours swapped), unless it differs only in a trailing digit (`boto3`, `jinja2`).
fn typo_of(name: &str) -> Option<&'static str> {
    POPULAR.iter().copied().find(|popular| {
        popular.len() >= MIN_NAME
            && one_edit(name.as_bytes(), popular.as_bytes())
            && !differs_in_digits(name, popular)
    })
}

fn differs_in_digits(a: &str, b: &str) -> bool {
    a.trim_end_matches(|c: char| c.is_ascii_digit())
        == b.trim_end_matches(|c: char| c.is_ascii_digit())
}

/// Returns true when `a` and `b` are exactly one edit apart (Damerau: a transposition of two
/// neighbours counts as one).
fn one_edit(a: &[u8], b: &[u8]) -> bool {
    if a == b || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a_rest, b_rest) = (&a[prefix..], &b[prefix..]);
    match a.len().cmp(&b.len()) {
        std::cmp::Ordering::Equal => {
            a_rest[1..] == b_rest[1..]
                || (a_rest.len() >= 2
                    && a_rest[0] == b_rest[1]
                    && a_rest[1] == b_rest[0]
                    && a_rest[2..] == b_rest[2..])
        }
        std::cmp::Ordering::Less => a_rest == &b_rest[1..],
        std::cmp::Ordering::Greater => &a_rest[1..] == b_rest,
    }
}

/// Checks the names in a pip requirements file, one per line. Returns (line index, byte
/// offset, finding) for the first look-alike.
pub(crate) fn requirements(document: &Document<'_>) -> Option<(usize, usize, Hit)> {
    for (index, line) in document.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with(['#', '-']) {
            continue;
        }
        let start = line.len() - trimmed.len();
        if let Some((offset, name)) = package_names(trimmed).into_iter().next()
            && let Some(hit) = check_name(name, start + offset)
        {
            return Some((index, hit.at, hit));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(Rule, Severity)> {
        let mut sink = Sink::default();
        detect(text, &mut sink);
        sink.hits
            .into_iter()
            .map(|hit| (hit.rule, hit.severity))
            .collect()
    }

    #[test]
    fn one_edit_is_one_edit() {
        assert!(one_edit(b"reqeusts", b"requests"));
        assert!(one_edit(b"colourama", b"colorama"));
        assert!(one_edit(b"requets", b"requests"));
        assert!(one_edit(b"requezts", b"requests"));
        assert!(!one_edit(b"requests", b"requests"));
        assert!(!one_edit(b"numba", b"numpy"));
    }

    #[test]
    fn untrusted_indexes_are_found() {
        assert_eq!(
            found("--extra-index-url https://pypi.fast-mirror.example/simple"),
            [(Rule::DependencyConfusion, Severity::High)]
        );
        assert_eq!(
            found("pip install --index-url https://pypi.mirror.example/simple pandas"),
            [(Rule::DependencyConfusion, Severity::High)]
        );
        assert_eq!(
            found("pip install --index-url https://pypi.corp.example/simple acme-tools"),
            [(Rule::DependencyConfusion, Severity::Medium)]
        );
        assert_eq!(
            found("pip install rasterio --find-links=https://wheels.gis.example/"),
            [(Rule::DependencyConfusion, Severity::Medium)]
        );
        assert_eq!(
            found(
                "pip install --extra-index-url https://artifactory.acme.example/api/pypi/simple acme-tools"
            ),
            [(Rule::DependencyConfusion, Severity::Medium)]
        );
        for text in [
            "pip install torch --index-url https://download.pytorch.org/whl/cu121",
            "pip install --extra-index-url http://pypi.internal/simple acme-tools",
            "npm config set registry https://registry.npmjs.org/",
        ] {
            assert_eq!(found(text), [], "{text}");
        }
    }

    #[test]
    fn look_alike_names_are_found() {
        for text in [
            "pip install reqeusts-toolbelt-extra colourama",
            "pip install r\u{0435}quests urllib3",
            "npm install expresss",
        ] {
            assert_eq!(
                found(text),
                [(Rule::DependencyConfusion, Severity::High)],
                "{text}"
            );
        }
        for text in [
            "pip install requests urllib3 boto3 jinja2",
            "pip install -r requirements.txt -e .",
            "pip install types-requests pytest-asyncio django-rest-framework",
            "npm install request-promise react-dom @types/node",
            "pip install <包名>",
            "uv add openapi-spec-validator",
            "pip install python-pptx python-gdcm",
        ] {
            assert_eq!(found(text), [], "{text}");
        }
    }

    #[test]
    fn requirements_files_are_read_line_by_line() {
        let text = "--extra-index-url https://pypi.example/simple\ntorch>=2.3\ncolourama==0.4\n";
        let document = Document::read("requirements.txt", text.as_bytes()).unwrap();
        let (line, _, hit) = requirements(&document).unwrap();
        assert_eq!((line, hit.rule), (2, Rule::DependencyConfusion));
    }
}
