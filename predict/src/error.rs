//! The error every module returns for input the user must change, and the
//! exit status of an error.

use std::fmt;

/// An input the user must change; `main` exits with status 2 for it.
#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Exit status for an error: 2 when the input was at fault (a
/// [`BadInput`] or a refusal of the models' checks), 1 otherwise.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    let bad_input = e.chain().any(|c| {
        c.is::<BadInput>()
            || c.is::<models::ModelError>()
            || c.is::<models::units::UnitError>()
            || c.is::<models::profile::ProfileError>()
            || c.is::<models::kernel::DescriptionError>()
    });
    if bad_input {
        2
    } else {
        1
    }
}
