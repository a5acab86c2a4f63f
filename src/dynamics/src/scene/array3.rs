//! Exactly three numbers: serde fills a `[f64; 3]` from the first three elements of a longer
//! TOML array and silently drops the rest, so `position_m = [0, 0, 1, 5]` loaded as
//! `[0, 0, 1]`. These `deserialize_with` helpers refuse any other length; the TOML parser
//! then reports the value's line and column and the field.

use serde::de::{Deserialize, Deserializer, Error};
use toml::Spanned;

fn three<E: Error>(v: Vec<f64>) -> Result<[f64; 3], E> {
    <[f64; 3]>::try_from(v.as_slice()).map_err(|_| {
        E::custom(format!(
            "expected an array of exactly 3 numbers, found {}",
            v.len()
        ))
    })
}

/// `[f64; 3]`, exactly three elements.
pub(crate) fn exact<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 3], D::Error> {
    three(Vec::<f64>::deserialize(d)?)
}

/// `Spanned<[f64; 3]>`, exactly three elements.
pub(crate) fn spanned<'de, D: Deserializer<'de>>(d: D) -> Result<Spanned<[f64; 3]>, D::Error> {
    let v = Spanned::<Vec<f64>>::deserialize(d)?;
    let span = v.span();
    Ok(Spanned::new(span, three(v.into_inner())?))
}

/// `Option<Spanned<[f64; 3]>>`, exactly three elements when present (use with
/// `#[serde(default)]`).
pub(crate) fn opt_spanned<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Spanned<[f64; 3]>>, D::Error> {
    Option::<Spanned<Vec<f64>>>::deserialize(d)?
        .map(|v| {
            let span = v.span();
            Ok(Spanned::new(span, three(v.into_inner())?))
        })
        .transpose()
}
