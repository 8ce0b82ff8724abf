//! End-to-end tests of the `skillscout` binary: one test binary, one module per area.

mod audit;
mod backup;
mod ci;
mod config;
mod crawl;
mod discover;
mod export;
mod frontier;
mod logs;
mod metrics;
mod progress;
mod publish;
mod search;
mod semantic;
mod serve;
#[path = "../../crawler/tests/it/server.rs"]
#[allow(dead_code)]
mod server;
mod store;
mod terminal;
mod util;
mod validate;
mod workers;
