//! `iogauge fsync-check listen|write|verify`: the power-cut test (src/fsync_check); its verdict
//! written by `present`.

use crate::cli::{FsyncCheckArgs, FsyncCheckCommand};
use anyhow::Result;

pub fn run(args: &FsyncCheckArgs) -> Result<()> {
    match &args.command {
        FsyncCheckCommand::Listen(a) => crate::fsync_check::listen(a),
        FsyncCheckCommand::Write(a) => crate::fsync_check::write(a),
        FsyncCheckCommand::Verify(a) => {
            let found = crate::fsync_check::verify(a)?;
            crate::ui::out(&crate::present::fsync_check(&found))?;
            match found.lost {
                0 => Ok(()),
                _ => Err(anyhow::anyhow!(
                    "{}: syncs returned before the data was durable; do not trust this storage with a database's commits (check its write cache setting)",
                    a.target.display()
                )),
            }
        }
    }
}
