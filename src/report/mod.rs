//! Report: everything that leaves the library as a file. This part: the CSV files and the
//! atomic write every output goes through.

mod atomic;
mod tables;

pub use atomic::write_atomic;
pub use tables::{
    PARAM_PREFIX, SummaryRow, TIMELINE_COLUMNS, format_float, incidents_csv, summary_csv, timeline_csv,
    transitions_csv,
};
