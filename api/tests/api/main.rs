//! Tests of the directory server over the fixture web (`seeds/web`), crawled on loopback:
//! one test binary, one module per area.

mod audit;
mod contract;
mod export;
mod fixture;
mod health;
mod hostile;
mod leaks;
mod mcp;
mod openapi;
mod ratelimit;
mod rpc;
mod serve;
#[path = "../../../crawler/tests/it/server.rs"]
#[allow(dead_code, unreachable_pub)]
mod server;
mod web;
