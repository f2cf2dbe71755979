//! `--until-stable` on a rate the kernel holds (a blkio throttle), with the machine to itself:
//! with another suite beside it, the throttle's IOs came late and in bursts (917 then 7,059
//! reads in consecutive 100 ms ticks), which is the machine's noise, not the rule's. The only
//! test of its file, so `quiet_turn` gives it the machine alone.

use serde_json::Value;

use crate::common;
use common::*;

/// `--until-stable` ends a cell early when its rate holds, and the rate is made to hold by the
/// kernel: a RAM-backed loop device held to 4,000 reads a second by a blkio throttle, with 16
/// in flight so the throttle always has reads queued to let through even when iogauge's thread
/// waits for a CPU. The cell may run 10 s; it must stop after its first second and well before
/// the 10.
#[test]
fn until_stable_stops_a_throttled_cell_early() {
    let _alone = quiet_turn(module_path!());
    let Some((cg, ram)) = throttle_rig("stable") else {
        return;
    };
    cg.throttle(&ram.dev, "read", 4000);
    let suite = "name = \"one\"\ndescription = \"d\"\n\n[[group]]\ntitle = \"p\"\nlayout = \"plain\"\nrw = [\"randread\"]\nbs = [\"4k\"]\niodepth = [16]\n";
    let dir = ram.dir.path();
    std::fs::write(dir.join("one.toml"), suite).unwrap();
    let out = output_within(
        std::process::Command::new("sh")
            .args([
                "-c",
                &cg.iogauge(&format!(
                    "suite --file one.toml {} --cell-time 10s --until-stable --json --no-store",
                    ram.dev.dev
                )),
            ])
            .current_dir(dir),
        DEADLINE,
    );
    let doc = json_of(&out);
    let steady: Vec<&Value> = doc["results"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["kind"] == "steady" && !v["evidence"]["ran_s"].is_null())
        .collect();
    assert_eq!(steady.len(), 1, "{}", doc["results"][0]["findings"]);
    let e = &steady[0]["evidence"];
    let after = e["stable_after_s"].as_f64().unwrap_or_else(|| {
        panic!(
            "not stable under a throttle: {e} after rates {}",
            doc["results"][0]["fine"]["rule"]
        )
    });
    let ran = e["ran_s"].as_f64().unwrap();
    assert!((1.0..8.0).contains(&after), "stable after {after} s");
    assert!(ran < 8.0, "stopped early: ran {ran} s of 10");
    let iops = doc["results"][0]["iops"].as_f64().unwrap();
    // The throttle hands out a slice of credit at the start, so a 1 s cell runs a little over.
    assert!(
        (3400.0..4600.0).contains(&iops),
        "the throttle's rate: {iops}"
    );
}
