//! The integration tests, one binary (as ripgrep's): the command line end to end, bad input,
//! traces, sweeps, the practices around a breaker and the output-folder guarantees, sharing the
//! helpers in `util`. (`tests/allocations.rs` stays a binary of its own: it installs a counting
//! global allocator.)

mod bad_input;
mod check;
mod docs;
mod exits;
mod explain;
mod formats;
mod hostile;
mod hosts;
mod import;
mod nesting;
mod output;
mod page;
mod practices;
mod replay;
mod run;
mod shards;
mod special;
mod sweep;
mod timers;
mod util;
mod walk;
