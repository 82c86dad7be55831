//! From a recommendation to a deployed configuration: the nearest configuration a breaker
//! library can express ([`nearest`]), read through a [`shape`](shape) every library shares.

pub mod import;
pub mod nearest;
pub mod shape;
