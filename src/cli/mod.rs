//! One file per subcommand: its arguments (clap) and the function that runs it; a large
//! command's output in files of its own (`simulate_output`, `simulate_plot`, `simulate_summary`), and the range
//! checks of numeric flags shared by the commands (`numeric_arg`).

pub mod arm;
pub mod calibrate;
pub mod calibrate_camera;
pub mod calibrate_tip;
pub mod calibrate_tracker;
pub mod demo;
pub mod interrupt;
pub mod keep_better;
pub mod numeric_arg;
pub mod progress;
pub mod record;
pub mod replay;
pub mod run;
pub mod sandbox;
pub mod scene;
pub mod scene_export;
pub mod scene_import;
pub mod simulate;
pub mod simulate_contacts;
pub mod simulate_limits;
pub mod simulate_output;
pub mod simulate_plot;
pub mod simulate_summary;
pub mod track;

/// An error and its causes on one line, "context: cause: cause", each said once: many of the
/// workspace's errors name their cause in their own message (`"{path}: {source}"`, so that
/// they read whole in a log) and also hand it on as their source, which anyhow's `{:#}`
/// would print again ("No such file or directory (os error 2): No such file or directory
/// (os error 2)"). A cause whose text the line already holds is left out.
pub fn error_text(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let said = cause.to_string();
        if text.contains(&said) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}")]
    struct Named {
        path: String,
        source: std::io::Error,
    }

    #[test]
    fn a_cause_the_message_names_is_said_once() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e = anyhow::Error::new(Named {
            path: "/a/pairs.csv".into(),
            source: io,
        })
        .context("calibrate tracker");
        assert_eq!(
            error_text(&e),
            "calibrate tracker: /a/pairs.csv: entity not found"
        );
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_text(&plain), "outer: inner");
    }
}
