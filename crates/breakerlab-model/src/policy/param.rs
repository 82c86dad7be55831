//! Parameter metadata and parameter errors, shared by every family, the resolver and the
//! catalogue. A leaf: it imports nothing else of `policy`, so the families and the registry
//! that lists them do not import each other.

/// Static description of one parameter of a family (name, unit, meaning).
#[derive(Copy, Clone, Debug)]
pub struct ParamMeta {
    /// The key used in files and `--set`.
    pub name: &'static str,
    /// Its unit or value set (`duration`, `ratio`, `calls`, ...).
    pub unit: &'static str,
    /// What it does.
    pub doc: &'static str,
}

impl ParamMeta {
    /// Builds a description (usable in `const` tables).
    pub const fn new(name: &'static str, unit: &'static str, doc: &'static str) -> ParamMeta {
        ParamMeta { name, unit, doc }
    }
}

/// Why a policy specification cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolicyError {
    /// No preset of that name.
    #[error("unknown policy preset `{name}`; known presets: {known}")]
    UnknownPreset {
        /// The name given.
        name: String,
        /// Every preset, comma-separated.
        known: String,
    },
    /// The preset has no such parameter.
    #[error("unknown parameter `{param}` for preset `{preset}`{hint}; its parameters are: {known}")]
    UnknownParam {
        /// The preset.
        preset: String,
        /// The key given.
        param: String,
        /// ` (did you mean `x`?)` when a parameter has a close name, else empty.
        hint: String,
        /// The preset's parameters, comma-separated.
        known: String,
    },
    /// A parameter has the wrong type or an out-of-range value.
    #[error("invalid value for `{param}`: expected {expected}, found {found}")]
    InvalidValue {
        /// The parameter.
        param: String,
        /// What it needs.
        expected: String,
        /// What was given.
        found: String,
    },
    /// Values that are each fine but cannot work together.
    #[error("impossible policy configuration: {0}")]
    Impossible(String),
}

/// Shorthand for [`PolicyError::InvalidValue`].
pub fn invalid(param: &str, expected: &str, found: &str) -> PolicyError {
    PolicyError::InvalidValue { param: param.into(), expected: expected.into(), found: found.into() }
}

/// `param`'s value `found` is refused as not `expected` unless `ok`.
pub fn require(
    ok: bool,
    param: &str,
    expected: &str,
    found: impl std::fmt::Display,
) -> Result<(), PolicyError> {
    if ok { Ok(()) } else { Err(invalid(param, expected, &found.to_string())) }
}

/// `param` must be at least 1 (a count, a threshold).
pub fn at_least_one<T: Default + PartialEq>(param: &str, value: T) -> Result<(), PolicyError> {
    if value == T::default() { Err(invalid(param, "at least 1", "0")) } else { Ok(()) }
}

/// `param` must be a duration longer than zero.
pub fn longer_than_zero(param: &str, value: crate::time::Dur) -> Result<(), PolicyError> {
    if value.is_zero() { Err(invalid(param, "a duration greater than 0", "0s")) } else { Ok(()) }
}

/// The cap `cap_name` must not be shorter than the duration `base_name` it bounds.
pub fn not_shorter(
    cap_name: &str,
    cap: crate::time::Dur,
    base_name: &str,
    base: crate::time::Dur,
) -> Result<(), PolicyError> {
    if cap < base {
        Err(impossible(format!("{cap_name} ({cap}) is shorter than {base_name} ({base})")))
    } else {
        Ok(())
    }
}

/// Shorthand for [`PolicyError::Impossible`].
pub fn impossible(msg: String) -> PolicyError {
    PolicyError::Impossible(msg)
}

/// A family's parameter descriptions, in listing order (written by [`family_config!`]).
pub trait Params {
    /// Every parameter, in the order of the configuration's fields.
    const PARAMS: &'static [ParamMeta];
}

/// Writes a family's configuration once, as one table of rows `name: Type = default, "unit",
/// "meaning";`. From it come the serde struct (unknown keys refused; each field documented by
/// its meaning), its `Default` (when every row has `= default`) and [`Params::PARAMS`], all in
/// the table's order.
macro_rules! family_config {
    (@struct $(#[$attr:meta])* $name:ident { $( $field:ident: $ty:ty, $unit:literal, $doc:literal; )* }) => {
        $(#[$attr])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $( #[doc = $doc] pub $field: $ty, )*
        }

        impl $crate::policy::param::Params for $name {
            const PARAMS: &'static [$crate::policy::param::ParamMeta] =
                &[$( $crate::policy::param::ParamMeta::new(stringify!($field), $unit, $doc), )*];
        }
    };
    ($(#[$attr:meta])* $name:ident { $( $field:ident: $ty:ty = $default:expr, $unit:literal, $doc:literal; )* }) => {
        family_config!(@struct $(#[$attr])* $name { $( $field: $ty, $unit, $doc; )* });

        impl Default for $name {
            fn default() -> $name {
                $name { $( $field: $default, )* }
            }
        }
    };
    ($(#[$attr:meta])* $name:ident { $( $field:ident: $ty:ty, $unit:literal, $doc:literal; )* }) => {
        family_config!(@struct $(#[$attr])* $name { $( $field: $ty, $unit, $doc; )* });
    };
}
pub(crate) use family_config;
