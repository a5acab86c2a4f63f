//! Errors of the solver library: bad scene files and bad simulation set-ups.

use std::path::PathBuf;

use thiserror::Error;

/// The message of [`SimError::TooLarge`]; a count that stopped past the limit
/// (`usize::MAX`) says so instead of a number.
fn too_large(elements: usize, factor_blocks: usize, bytes: usize, limit: usize) -> String {
    let need = if factor_blocks == usize::MAX || bytes == usize::MAX {
        "so many blocks of the coupled solver's factor that counting them stopped".to_owned()
    } else {
        format!(
            "{factor_blocks} blocks of the coupled solver's factor, which would need {} MB",
            bytes / 1_000_000
        )
    };
    format!(
        "{elements} joints, springs and the stylus couple into {need}, over the limit of {} MB \
         (elements that share a moving body couple with each other)",
        limit / 1_000_000
    )
}

/// A simulation could not be built or configured.
#[derive(Debug, Error, PartialEq)]
pub enum SimError {
    /// The coupled solver's factor for these elements would be too large to allocate.
    #[error("{}", too_large(*elements, *factor_blocks, *bytes, *limit))]
    TooLarge {
        /// Joints + springs + the stylus.
        elements: usize,
        /// Blocks of the factor's pattern (`usize::MAX` when counting stopped past the limit).
        factor_blocks: usize,
        /// What the factor would need (bytes; `usize::MAX` on overflow).
        bytes: usize,
        /// The limit (bytes).
        limit: usize,
    },
    /// Body 0 must be the fixed ground.
    #[error("the first body must be the fixed ground")]
    NoGround,
    /// An element refers to a body index that does not exist.
    #[error("{what} `{name}` refers to body index {index}, which does not exist")]
    UnknownBodyIndex {
        /// Kind of element.
        what: &'static str,
        /// Its name.
        name: String,
        /// The bad index.
        index: usize,
    },
    /// A joint's block J M⁻¹ Jᵀ is singular (e.g. both bodies fixed).
    #[error(
        "joint `{joint}` cannot be solved: its block J M⁻¹ Jᵀ is singular (are both bodies fixed?)"
    )]
    SingularJoint {
        /// Joint name.
        joint: String,
    },
    /// A parameter is out of range.
    #[error("bad value {value} for {field}")]
    BadParameter {
        /// Parameter name.
        field: &'static str,
        /// The rejected value.
        value: f64,
    },
    /// The stylus can only clip to a dynamic body.
    #[error("the stylus cannot clip to body index {index} (missing or fixed)")]
    BadStylusBody {
        /// The body index.
        index: usize,
    },
    /// No grab point with this index.
    #[error("the scene has no grab point number {index}")]
    UnknownGrabPoint {
        /// The index asked for.
        index: usize,
    },
    /// A step could not be taken (the simulation keeps the state before it).
    #[error("{0}")]
    StepFailed(Box<super::solver::StepFailure>),
    /// Contact with this many joint rows would make the dense solve through the joints too
    /// large (see [`crate::contact::through_joints::MAX_DENSE_BYTES`]).
    #[error(
        "contact with {joint_rows} joint rows over {bodies} bodies: the contact solve through \
         the joints is dense and would need {} MB before any contact, over the limit of {} MB; \
         leave contact off for this mechanism (no [contact], [[plane]] or [[static]], and no \
         body that sets friction, restitution or collide) or make it smaller",
        bytes / 1_000_000,
        limit / 1_000_000
    )]
    ContactThroughJointsTooLarge {
        /// Rows of all the joints.
        joint_rows: usize,
        /// Bodies, the ground and the stylus tip included.
        bodies: usize,
        /// What the solve's buffers would need without a contact (bytes).
        bytes: usize,
        /// The limit (bytes).
        limit: usize,
    },
    /// A contact material, plane or static shape is unusable.
    #[error("contact `{name}`: {reason}")]
    BadContact {
        /// The body, plane or static shape.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A joint's limits are unusable (see [`crate::model::limit`]).
    #[error("joint `{name}`: `{field}` {reason}")]
    BadJointLimit {
        /// The joint.
        name: String,
        /// The field: `limits_rad`, `limits_m` or `limit_restitution`.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A rigid group cannot be made (see [`crate::deformable::rigid_group`]).
    #[error("rigid group `{name}`: {reason}")]
    BadRigidGroup {
        /// The group's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// No rigid group has this name.
    #[error("no rigid group is called `{name}`")]
    UnknownRigidGroup {
        /// The name asked for.
        name: String,
    },
    /// A force element acts on a fixed body or has a bad number.
    #[error("force element `{name}`: {reason}")]
    BadForceElement {
        /// The element's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

/// A scene file could not be read or is invalid. Every variant names the file; parse and
/// validation errors also name the line, column and field.
#[derive(Debug, Error)]
pub enum SceneError {
    /// The file could not be read (retrying helps only if the file appears).
    // The I/O error is part of the message and not a `source`, so that a report that prints
    // the whole chain does not say it twice.
    #[error("cannot read scene file {}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        cause: std::io::Error,
    },
    /// The file is not UTF-8 text: where the first invalid byte is.
    #[error(
        "{}:{line}:{column}: byte {offset} of the file (0x{byte:02x}, line {line}, column \
         {column}) is not valid UTF-8",
        path.display()
    )]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// 1-based line of the byte.
        line: usize,
        /// 1-based byte column within the line.
        column: usize,
        /// 0-based offset of the byte in the file.
        offset: usize,
        /// The byte.
        byte: u8,
    },
    /// TOML syntax error, a missing or misspelt field or a value of the wrong type; the
    /// message from the TOML parser carries the line, column and field.
    #[error("scene file {}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A value parsed but is not acceptable.
    #[error("{}:{line}:{column}: field `{field}`: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the value.
        line: usize,
        /// 1-based column of the value.
        column: usize,
        /// Field path, e.g. `joint[3].anchor2_in_body_m`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The scene is valid field by field but cannot be simulated.
    // The cause is part of the message and not a `source`, so that a report that prints the
    // whole chain does not say it twice.
    #[error("scene file {}: {cause}", path.display())]
    Build {
        /// The file.
        path: PathBuf,
        /// Why.
        cause: SimError,
    },
}
