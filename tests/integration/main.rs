//! End-to-end tests of the `skillscout` binary: one test binary, one module per area.

mod search;
mod util;
mod validate;
