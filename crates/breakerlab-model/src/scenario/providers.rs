//! Multi-provider routing in scenario files (seed 002's `MultiProviderRouter`): `[routing]` picks
//! the strategy, each `[[providers]]` table is one provider with its own dependency model
//! (`[providers.upstream]`, `[[providers.incidents]]`) and price per call. Validated here, with
//! file:line:col, before anything is simulated.

use super::InputError;
use crate::upstream::{IncidentSpec, UpstreamSpec};
use serde::Deserialize;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

/// Most providers a scenario may list (the engine tracks the providers a request has tried in
/// one 32-bit mask, which keeps a call in flight as small as without routing).
pub const MAX_PROVIDERS: usize = 32;

/// How the client orders the providers for each attempt of a request.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// In file order: the first provider whose breaker admits the call gets it.
    #[default]
    Priority,
    /// By health score × U(0.8, 1.0), highest first, ties by file order (seed 002's
    /// `get_best_provider`). The score starts at 1.0, a success adds 0.1 (up to 1.0), a failure
    /// takes 0.2 (down to 0.1).
    Health,
}

impl Strategy {
    /// The name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Priority => "priority",
            Strategy::Health => "health",
        }
    }
}

/// The `[routing]` table.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingSpec {
    /// How providers are ordered.
    pub strategy: Strategy,
}

/// One `[[providers]]` table as written (spans kept for error positions).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ProviderFile {
    name: Spanned<String>,
    #[serde(default)]
    price: Option<Spanned<f64>>,
    #[serde(default)]
    upstream: Option<Spanned<UpstreamSpec>>,
    #[serde(default)]
    incidents: Vec<Spanned<IncidentSpec>>,
}

/// One validated provider.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderSpec {
    /// Unique name: letters, digits, `_` and `-` (it appears in column names such as
    /// `provider.<name>.attempts` and in ground-truth kinds such as `<name>:outage`).
    pub name: String,
    /// Cost of one call sent to it, in any currency unit (≥ 0; default 0).
    pub price: f64,
    /// Its healthy behaviour (like the top-level `[upstream]`).
    pub upstream: UpstreamSpec,
    /// Its incidents (like the top-level `[[incidents]]`).
    pub incidents: Vec<IncidentSpec>,
}

/// Checks the `[[providers]]` tables: at least one, at most [`MAX_PROVIDERS`], names unique and
/// plain, prices finite and ≥ 0, each upstream and incident valid.
pub(super) fn validate(
    path: &Path,
    text: &str,
    files: Vec<Spanned<ProviderFile>>,
) -> Result<Vec<ProviderSpec>, InputError> {
    let at = |span: Range<usize>, message: String| InputError::at_offset(path, text, span.start, message);
    if files.len() > MAX_PROVIDERS {
        return Err(at(
            files[MAX_PROVIDERS].span(),
            format!("at most {MAX_PROVIDERS} [[providers]] are supported, found {}", files.len()),
        ));
    }
    let mut out: Vec<ProviderSpec> = Vec::with_capacity(files.len());
    for (i, file) in files.into_iter().enumerate() {
        let file = file.into_inner();
        let name_span = file.name.span();
        let name = file.name.into_inner();
        let label = format!("[[providers]] #{}", i + 1);
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(at(
                name_span,
                format!(
                    "{label}: `name` must be letters, digits, `_` or `-` (e.g. \"primary\"), found {name:?}"
                ),
            ));
        }
        if out.iter().any(|p| p.name == name) {
            return Err(at(name_span, format!("{label}: provider name `{name}` is used twice")));
        }
        let label = format!("{label} (`{name}`)");
        let price = match file.price {
            Some(p) => {
                let price_span = p.span();
                let price = p.into_inner();
                if !price.is_finite() || price < 0.0 {
                    return Err(at(
                        price_span,
                        format!(
                            "{label}: `price` must be a finite number ≥ 0 (cost per call), found {price}"
                        ),
                    ));
                }
                price
            }
            None => 0.0,
        };
        let upstream = match file.upstream {
            Some(u) => {
                let u_span = u.span();
                let u = u.into_inner();
                u.validate().map_err(|m| at(u_span.clone(), format!("{label} [providers.upstream]: {m}")))?;
                if u.hosts.is_some() {
                    return Err(at(
                        u_span,
                        format!(
                            "{label} [providers.upstream]: a provider is one dependency; a pool of `hosts` goes in the top-level [upstream]"
                        ),
                    ));
                }
                u
            }
            None => UpstreamSpec::default(),
        };
        let mut incidents = Vec::with_capacity(file.incidents.len());
        for (k, inc) in file.incidents.into_iter().enumerate() {
            let inc_span = inc.span();
            let inc = inc.into_inner();
            inc.validate().map_err(|m| {
                at(inc_span.clone(), format!("{label} [[providers.incidents]] #{}: {m}", k + 1))
            })?;
            if let Some(m) = super::pool_only(&inc) {
                return Err(at(inc_span, format!("{label} [[providers.incidents]] #{}: {m}", k + 1)));
            }
            incidents.push(inc);
        }
        out.push(ProviderSpec { name, price, upstream, incidents });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::scenario::{Scenario, Source, Strategy};
    use std::path::Path;

    const HEAD: &str = "duration = \"1h\"\n[traffic]\nkind = \"constant\"\nrate = 1.0\n";

    fn parse(tail: &str) -> Result<Scenario, String> {
        Scenario::parse(Path::new("s.toml"), &format!("{HEAD}{tail}")).map_err(|e| e.to_string())
    }

    #[test]
    fn providers_parse_in_file_order() {
        let sc = parse(
            "[routing]\nstrategy = \"health\"\n[[providers]]\nname = \"a\"\nprice = 0.42\n\
             [[providers.incidents]]\nkind = \"outage\"\nstart = \"1m\"\nduration = \"1m\"\n\
             [[providers]]\nname = \"b-2\"\n[providers.upstream]\np50 = \"1s\"\np95 = \"2s\"\n",
        )
        .unwrap();
        let Source::Providers { routing, providers, .. } = &sc.source else { panic!("providers") };
        assert_eq!(routing.strategy, Strategy::Health);
        assert_eq!(providers.len(), 2);
        assert_eq!(
            (providers[0].name.as_str(), providers[0].price, providers[0].incidents.len()),
            ("a", 0.42, 1)
        );
        assert_eq!((providers[1].name.as_str(), providers[1].price), ("b-2", 0.0));
        assert_eq!(providers[1].upstream.p95, crate::time::Dur::from_secs(2));
        // [routing] is optional: priority.
        let sc = parse("[[providers]]\nname = \"a\"\n").unwrap();
        let Source::Providers { routing, .. } = &sc.source else { panic!("providers") };
        assert_eq!(routing.strategy, Strategy::Priority);
    }

    #[test]
    fn bad_providers_are_refused_at_their_line() {
        let cases = [
            ("[[providers]]\nname = \"a\"\n[[providers]]\nname = \"a\"\n", "s.toml:8:8:", "used twice"),
            ("[[providers]]\nname = \"a b\"\n", "s.toml:6:8:", "letters, digits"),
            ("[[providers]]\nname = \"a\"\nprice = -1.0\n", "s.toml:7:9:", "finite number ≥ 0"),
            (
                "[[providers]]\nname = \"a\"\n[providers.upstream]\np50 = \"2s\"\np95 = \"1s\"\n",
                "s.toml:",
                "must not be shorter",
            ),
            ("[[providers]]\nname = \"a\"\ncolour = \"red\"\n", "s.toml:7:", "unknown field `colour`"),
            (
                "[[providers]]\nname = \"a\"\n[[providers.incidents]]\nkind = \"outage\"\nstart = \"0s\"\nduration = \"1m\"\nfactor = 2.0\n",
                "s.toml:",
                "[[providers.incidents]] #1",
            ),
            ("[routing]\nstrategy = \"priority\"\n", "s.toml:5:1:", "[routing] needs [[providers]]"),
            (
                "[routing]\nstrategy = \"random\"\n[[providers]]\nname = \"a\"\n",
                "s.toml:6:",
                "unknown variant `random`",
            ),
            (
                "[[incidents]]\nkind = \"outage\"\nstart = \"0s\"\nduration = \"1m\"\n[[providers]]\nname = \"a\"\n",
                "s.toml:5:1:",
                "remove the top-level [[incidents]]",
            ),
            (
                "[upstream]\np50 = \"1s\"\n[[providers]]\nname = \"a\"\n",
                "s.toml:5:1:",
                "remove the top-level [upstream]",
            ),
        ];
        for (tail, at, what) in cases {
            let err = parse(tail).unwrap_err();
            assert!(err.starts_with(at) && err.contains(what), "{tail:?}: {err}");
        }
    }
}
