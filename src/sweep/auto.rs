//! `replicates = "auto"`: sequential replicates (the screen-then-select procedures of Nelson,
//! Swann, Goldsman & Song 2001, and Kim & Nelson's sequential ones, made deterministic).
//!
//! The sweep runs in stages. Stage 1 runs replicate 0 of every configuration: the constraints
//! that hold in every replicate already rule out each configuration that breaks one there (no
//! more replicates can mend that), at no error. Each later stage brings the configurations
//! still in the running to the next replicate count of the [`schedule`] (1, 3, 5, 10, 20, …,
//! up to `max_replicates`). After each stage:
//!
//! 1. the selection ([`super::selection::subset`]) runs on the qualifying configurations; when
//!    the lowest-cost one is separated from every other, the sweep stops: confidence reached;
//! 2. else, at the last replicate count (or when the next stage would pass `--max-calls`), it
//!    stops and says the budget ran out, listing what cannot be told apart;
//! 3. else it screens ([`super::selection::screen`]): a configuration beaten beyond noise by one
//!    of the lowest-cost qualifying ones leaves the running, as does one breaking a constraint
//!    that more replicates cannot mend; the rest go to the next stage.
//!
//! The error rate α = 1 − confidence is spread over the looks that can err (those with at least
//! two replicates, `J` of them): each look screens at α / 2J and selects at α / 2J, so the
//! probability that the best configuration is screened out, or wrongly declared separated, at
//! any look is at most α (Bonferroni over the looks and the comparisons; under normal paired
//! differences, as the procedures assume).
//!
//! Replicate `r` of a configuration is the replicate `r` an exhaustive sweep runs (the same
//! seed, the same request streams), so every comparison stays paired and a stage is a fixed set
//! of cells: the bytes written do not depend on the thread count.

/// The share of the error rate each look's selection (and each look's screening) uses: 1 / 2J
/// for `J` looks.
pub fn selection_share(looks: usize) -> f64 {
    1.0 / (2 * looks.max(1)) as f64
}
