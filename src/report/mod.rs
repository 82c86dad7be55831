//! Report: the renderers of everything that leaves the library as a file: the CSV files, the
//! PNG charts and the review page, each as bytes in memory. Writing them is the application
//! layer's job (`app::output`).

mod calls;
pub mod charts;
pub mod contents;
pub mod explain;
pub mod folder;
pub mod opening;
pub mod page;
mod selection;
mod tables;
pub mod windows;

pub use calls::CallsCsv;
pub use explain::explain_csv;
pub use tables::{
    PARAM_PREFIX, SummaryRow, format_float, incidents_csv, latency_csv, summary_csv, timeline_csv,
    transition_row, transitions_csv, transitions_header,
};
