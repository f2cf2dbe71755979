//! `iogauge clean`: undo what killed runs left, from their crash ledgers (see `ledger`), and
//! the table of every kind of thing a run can leave, which the ledger is handed to read them.

use crate::cli::CleanArgs;
use crate::ledger::Kind;
use anyhow::Result;

/// Every kind of resource a run writes down in its crash ledger, each read and undone by the
/// module that makes it: the ledger knows entries, and this is where it learns their kinds.
pub fn kinds() -> [Kind; 5] {
    [
        Kind::of::<crate::ledger::TestFile>(),
        Kind::of::<crate::sweep::fs::ScratchMount>(),
        Kind::of::<crate::sweep::array::Record>(),
        Kind::of::<crate::db::cluster::PgCluster>(),
        Kind::of::<crate::db::mariadb::MyServer>(),
    ]
}

pub fn clean(args: &CleanArgs) -> Result<()> {
    let done = crate::ledger::clean(args.dry_run, &kinds());
    crate::ui::out(&crate::present::clean(&done, args.dry_run))?;
    match done.iter().all(|o| o.ok) {
        true => Ok(()),
        false => Err(anyhow::anyhow!(
            "some of what earlier runs left could not be removed (see above)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::kinds;
    use crate::ledger::Entry;

    /// Ledgers written before the kinds moved to their resources (one enum tagged by `kind`)
    /// are read by the table as they were: each described as then, none unknown.
    #[test]
    fn every_kind_reads_the_ledgers_earlier_versions_wrote() {
        let old = serde_json::json!([
            {"kind": "file", "path": "/t/iogauge.test", "dev": 2049, "ino": 12},
            {"kind": "mount", "dir": "/tmp/iogauge-xfs-1", "dev": "/dev/loop9", "fs": "xfs"},
            {"kind": "cluster", "data": "/t/iogauge-pg-7/data",
             "dirs": [{"path": "/t/iogauge-pg-7", "dev": 1, "ino": 2}], "cgroup": null},
            {"kind": "mariadb", "data": "/t/iogauge-my-7/data", "dirs": ["/t/iogauge-my-7"]},
            {"kind": "array", "made_by": "md", "device": "/dev/md9",
             "members": ["/dev/vdb", "/dev/vdc"], "uuid": "ab"}
        ]);
        let entries: Vec<Entry> = serde_json::from_value(old).unwrap();
        let said: Vec<String> = entries.iter().map(|e| e.describe(&kinds())).collect();
        assert_eq!(
            said,
            [
                "test file /t/iogauge.test",
                "xfs file system on /dev/loop9 mounted at /tmp/iogauge-xfs-1",
                "database cluster /t/iogauge-pg-7/data",
                "MariaDB server directory /t/iogauge-my-7/data",
                "md array /dev/md9 of /dev/vdb, /dev/vdc",
            ]
        );
        // Written back, each is the same JSON as read.
        let again: Vec<Entry> =
            serde_json::from_value(serde_json::to_value(&entries).unwrap()).unwrap();
        assert_eq!(again, entries);
    }

    /// A kind this iogauge does not know (a newer one wrote it) is named and left alone, and
    /// `clean` says it could not undo it.
    #[test]
    fn an_unknown_kind_is_named_and_left_alone() {
        let e: Entry =
            serde_json::from_value(serde_json::json!({"kind": "zpool", "name": "t"})).unwrap();
        assert!(e
            .describe(&kinds())
            .starts_with("zpool entry this iogauge cannot read"));
        assert!(e.describe(&[]).contains("\"name\":\"t\""));
    }
}
