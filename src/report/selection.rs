//! The review page's sections on the selection (a sweep's review.toml): whether the winner is
//! separated from the rest and by how much, and where a configuration misses incidents. The
//! page ([`super::page`]) calls these where its sections go.

/// The decision table's "missed incidents" cell, with where the configuration missed an
/// incident in some replicate: `0.3333 of 14 (missed on hang in 1 of 3 replicates)`.
pub fn with_missed_in(cell: String, missed_in: Option<&str>) -> String {
    match missed_in {
        Some(m) => format!("{cell} (missed on {m})"),
        None => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_missed_cell_says_where() {
        assert_eq!(with_missed_in("0 of 4".into(), None), "0 of 4");
        assert_eq!(
            with_missed_in("0.3333 of 4".into(), Some("hang in 1 of 3 replicates")),
            "0.3333 of 4 (missed on hang in 1 of 3 replicates)"
        );
    }
}
