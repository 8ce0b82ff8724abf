#!/usr/bin/env node
const { execSync } = require("child_process");
const fs = require("fs");
const semver = require("semver");
const bump = process.argv[process.argv.indexOf("--bump") + 1] || "patch";
const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
const last = execSync("git describe --tags --abbrev=0 || true").toString().trim();
const log = execSync(`git log ${last ? last + ".." : ""}HEAD --pretty=%s`).toString().trim().split("\n");
pkg.version = semver.inc(pkg.version, bump);
fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n");
const feats = log.filter(l => l.startsWith("feat")), fixes = log.filter(l => l.startsWith("fix"));
const entry = `## ${pkg.version}\n\n### Features\n${feats.map(f => "- " + f).join("\n")}\n\n### Fixes\n${fixes.map(f => "- " + f).join("\n")}\n\n`;
const old = fs.existsSync("CHANGELOG.md") ? fs.readFileSync("CHANGELOG.md", "utf8") : "";
fs.writeFileSync("CHANGELOG.md", entry + old);
console.log("bumped to", pkg.version);
