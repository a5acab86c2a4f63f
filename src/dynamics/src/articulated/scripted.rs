//! The articulated method under the scripted stylus loop ([`crate::run_scripted`]):
//! `simulate --method articulated --stylus` runs the default method's loop, summary and CSV
//! rows on [`ArticulatedSim`].

use super::{ArticulatedError, ArticulatedSim};
use crate::drive::scripted::scripted_sim_by_its_own_calls;

scripted_sim_by_its_own_calls!(ArticulatedSim, ArticulatedError, |index| {
    ArticulatedError::UnknownGrabPoint { index }
});
