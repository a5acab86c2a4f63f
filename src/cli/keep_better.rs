//! The one path by which a calibration (`calibrate tracker`, `calibrate tip`) writes its file at
//! `--out`: a file already there is replaced only by a fit at least as good, or with `--force`;
//! else the new fit goes beside it (`NAME.new.toml`) so that a session's work is not lost, and
//! the run fails naming both and why the file stayed.

use anyhow::bail;
use std::path::{Path, PathBuf};

/// A fit that fails its checks is not written (the old file stays), unless `force`, which
/// writes it with a warning: the calibrations' one rule before [`save_keeping_better`].
pub fn refuse_unless_forced<E: std::fmt::Display>(
    check: Result<(), E>,
    out: &Path,
    force: bool,
) -> anyhow::Result<()> {
    if let Err(rejection) = check {
        if !force {
            bail!(
                "{}: not written, the fit is refused: {rejection}. Any previous file is \
                 untouched; --force writes the fit anyway",
                out.display()
            );
        }
        eprintln!("warning: writing a fit that fails the checks because of --force: {rejection}");
    }
    Ok(())
}

/// What is at `--out` before the new fit is written.
#[derive(Debug)]
pub enum Existing {
    /// Nothing.
    Nothing,
    /// A calibration of the same kind, whose fit had this RMS residual (mm).
    Calibration {
        /// Its RMS residual, mm.
        rms_mm: f64,
    },
    /// Something whose quality cannot be compared: not a calibration of this kind, or one
    /// made by hand.
    NotComparable {
        /// What it is, after "it is" / "which was" (e.g. "not a tracker calibration").
        what: String,
        /// Why, if there is more to say (the parser's message).
        detail: Option<String>,
    },
}

/// The new fit as the messages name it.
#[derive(Debug)]
pub struct NewFit<'a> {
    /// Where it is to be written.
    pub out: &'a Path,
    /// Its RMS residual, mm.
    pub rms_mm: f64,
    /// What it was fitted to, after its RMS (e.g. "over 8 points").
    pub over: String,
    /// `--force`: replace whatever is there.
    pub force: bool,
}

/// Writes the fit with `write` at `fit.out`, or beside it when the file there must stay (see
/// the module docs). Prints nothing on success but what it replaced (stderr), so that the file
/// is on disk before any output can fail.
pub fn save_keeping_better(
    fit: &NewFit<'_>,
    existing: Existing,
    write: impl Fn(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let out = fit.out;
    // Why the file at `out` stays, or what replacing it replaces.
    let (kept_because, replaced) = match existing {
        Existing::Nothing => (None, None),
        Existing::Calibration { rms_mm } if fit.rms_mm > rms_mm && !fit.force => (
            Some(format!(
                "it holds a better calibration (RMS {rms_mm:.3} mm) than the new fit (RMS \
                 {:.3} mm {})",
                fit.rms_mm, fit.over
            )),
            None,
        ),
        Existing::Calibration { rms_mm } => (
            None,
            Some(format!(
                "replaced {}: RMS {rms_mm:.3} mm before, {:.3} mm now",
                out.display(),
                fit.rms_mm
            )),
        ),
        Existing::NotComparable { what, detail } if !fit.force => (
            Some(match detail {
                Some(d) => format!("it is {what} ({d})"),
                None => format!("it is {what}"),
            }),
            None,
        ),
        Existing::NotComparable { what, .. } => (
            None,
            Some(format!(
                "replaced {}, which was {what} (--force)",
                out.display()
            )),
        ),
    };
    if let Some(why) = kept_because {
        let aside = aside_path(out);
        write(&aside)?;
        bail!(
            "{}: kept, {why}; the new fit is written to {} instead; --force replaces the file",
            out.display(),
            aside.display()
        );
    }
    write(out)?;
    if let Some(note) = replaced {
        eprintln!("{note}");
    }
    Ok(())
}

/// Where a fit that may not replace `out` is written instead: `NAME.new.toml` beside it.
pub fn aside_path(out: &Path) -> PathBuf {
    out.with_extension("new.toml")
}
