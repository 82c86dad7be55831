//! placeholder
pub mod charts;
