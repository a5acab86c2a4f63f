//! Progress bars for long commands (`simulate`, `track`): drawn on stderr when it is a
//! terminal, hidden in pipes and files so that logs and CI output stay clean.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `len` units of work (`unit`: "steps", "frames"), or a spinner with a count when
/// the length is not known. Hidden unless stderr is a terminal.
pub fn bar(len: Option<u64>, unit: &str) -> ProgressBar {
    let target = ProgressDrawTarget::stderr_with_hz(10);
    match len {
        Some(len) => {
            let style = ProgressStyle::with_template(&format!(
                "{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {unit} (eta {{eta}})"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            ProgressBar::with_draw_target(Some(len), target).with_style(style)
        }
        None => {
            let style = ProgressStyle::with_template(&format!(
                "{{elapsed_precise}} {{spinner}} {{pos}} {unit}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
            ProgressBar::with_draw_target(None, target).with_style(style)
        }
    }
}
