//! `breakerlab presets`: every preset with its family, source, quirks and parameters.
//! Nothing is written: the listing is the report.

use crate::policy::{PolicyError, preset_params, presets};
use std::fmt::Write as _;

/// The listing of one preset, or of all of them when `name` is `None`.
pub fn render(name: Option<&str>) -> Result<String, PolicyError> {
    let mut s = String::new();
    let mut found = false;
    for p in presets() {
        if name.is_some_and(|n| n != p.name) {
            continue;
        }
        found = true;
        let _ = writeln!(s, "{}  (family: {})", p.name, p.family);
        let _ = writeln!(s, "  {}", p.summary);
        if !p.library.is_empty() {
            let _ = writeln!(s, "  library: {}", p.library);
        }
        let _ = writeln!(s, "  source: {}", p.source);
        for q in p.quirks {
            let _ = writeln!(s, "  quirk: {q}");
        }
        let params = preset_params(p.name)?;
        if !params.is_empty() {
            let w = params.iter().map(|d| d.name.len()).max().unwrap_or(0);
            let dw = params.iter().map(|d| d.default.len()).max().unwrap_or(0);
            let _ = writeln!(s, "  parameters:");
            for d in params {
                let unit = if d.unit.is_empty() { String::new() } else { format!(" [{}]", d.unit) };
                let _ = writeln!(s, "    {:<w$} = {:<dw$}  {}{}", d.name, d.default, d.doc, unit);
            }
        }
        s.push('\n');
    }
    if !found && let Some(n) = name {
        return preset_params(n).map(|_| String::new());
    }
    Ok(s)
}
