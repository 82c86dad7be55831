//! Which cells a results table lacks: the (scenario, replicate) request streams and the
//! configurations of each that have no run, so `recommend` can refuse a partial runs.csv (some
//! shards' rows only) instead of ranking it as if it were the whole sweep.
//!
//! Computation only.

use super::table::ResultTable;

/// The most missing ranges [`Coverage::missing`] lists.
pub const MAX_LISTED: usize = 12;

/// How much of its grid (scenarios × configurations × replicates it names) a table holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Cells present.
    pub present: u64,
    /// Cells its grid makes.
    pub expected: u64,
    /// The first [`MAX_LISTED`] missing ranges: `` `hang` replicate 1 configs 3-5 ``.
    pub missing: Vec<String>,
    /// Missing ranges beyond those listed.
    pub more: usize,
}

impl Coverage {
    /// True when every cell is present.
    pub fn complete(&self) -> bool {
        self.present == self.expected
    }

    /// The missing ranges as one line: the listed ones, then how many more.
    pub fn missing_text(&self) -> String {
        let mut s = self.missing.join(", ");
        if self.more > 0 {
            s.push_str(&format!(" and {} more", self.more));
        }
        s
    }
}

/// The cells of `table`'s grid it holds and the ranges it lacks, stream by stream
/// ((scenario, replicate), then configuration ids in table order).
pub fn coverage(table: &ResultTable) -> Coverage {
    let (configs, replicates) = (table.n_configs(), table.replicates() as usize);
    let ids: Vec<usize> = table.configs().map(|c| c.config.id).collect();
    let mut missing: Vec<String> = Vec::new();
    let mut more = 0usize;
    let mut present = 0u64;
    for (s, scenario) in table.scenarios.iter().enumerate() {
        // Per replicate, which configurations (table positions) have a run.
        let mut has = vec![vec![false; configs]; replicates];
        for c in 0..configs {
            for run in table.group(s, c) {
                if let Some(slot) = has.get_mut(run.replicate as usize) {
                    slot[c] = true;
                    present += 1;
                }
            }
        }
        for (r, row) in has.iter().enumerate() {
            let mut c = 0;
            while c < configs {
                if row[c] {
                    c += 1;
                    continue;
                }
                let start = c;
                while c < configs && !row[c] {
                    c += 1;
                }
                if missing.len() < MAX_LISTED {
                    let which = if c - start == 1 {
                        format!("config {}", ids[start])
                    } else {
                        format!("configs {}-{}", ids[start], ids[c - 1])
                    };
                    missing.push(format!("`{scenario}` replicate {r} {which}"));
                } else {
                    more += 1;
                }
            }
        }
    }
    let expected = (table.scenarios.len() * configs * replicates) as u64;
    Coverage { present, expected, missing, more }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::table::tests::{cfg, run};

    fn table(runs: Vec<crate::sweep::table::RunRow>) -> ResultTable {
        let configs = (0..4).map(|i| cfg(i, "consecutive", "failure_threshold", i as i64)).collect();
        ResultTable::new(vec!["blip".into(), "hang".into()], configs, vec!["false_opens".into()], runs)
            .unwrap()
    }

    #[test]
    fn a_complete_table_is_complete_and_a_partial_one_names_what_it_lacks() {
        let all: Vec<_> = (0..2)
            .flat_map(|s| (0..4).flat_map(move |c| (0..2).map(move |r| run(s, c, r, &[Some(1.0)]))))
            .collect();
        let full = coverage(&table(all.clone()));
        assert!(full.complete(), "{full:?}");
        assert_eq!((full.present, full.expected), (16, 16));
        // Shard 1 of 2 lost: `hang` replicate 1 configs 1-3 and replicate 0 config 2.
        let partial: Vec<_> = all
            .into_iter()
            .filter(|r| {
                !(r.scenario == 1
                    && ((r.replicate == 1 && r.config >= 1) || (r.replicate == 0 && r.config == 2)))
            })
            .collect();
        let c = coverage(&table(partial));
        assert!(!c.complete());
        assert_eq!((c.present, c.expected), (12, 16));
        assert_eq!(c.missing_text(), "`hang` replicate 0 config 2, `hang` replicate 1 configs 1-3");
    }
}
