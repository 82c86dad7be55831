//! Report: everything that leaves the library as a file: the CSV files, the atomic write every
//! output goes through, the PNG charts and the review page.

pub mod atomic;
pub mod charts;
pub mod page;
mod tables;

pub use atomic::write_atomic;
pub use tables::{
    PARAM_PREFIX, SummaryRow, TIMELINE_COLUMNS, format_float, incidents_csv, latency_csv, summary_csv,
    timeline_csv, transitions_csv,
};
