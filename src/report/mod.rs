//! placeholder
pub mod charts;
pub mod page;
