//! Capture latency and CPU use of the microphone threads, measured on the synthetic
//! microphone through the same worker path as a sound card.
//!
//! `cargo bench -p ar-drivers --bench mic_latency` (MIC_BENCH_SECS sets the run length,
//! default 5 s). Latency is from a block's end (the instant its last sample was captured)
//! to the moment a consumer blocked on the level channel receives its `MicLevel`. CPU use
//! is the per-thread CPU clock (CLOCK_THREAD_CPUTIME_ID) over the wall-clock run time.

use ar_drivers::mic::{MicConfig, MicSource, MicWorker, SyntheticMic};
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn main() {
    let secs: f64 = std::env::var("MIC_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let config = MicConfig::default();
    let mic = match MicWorker::spawn(MicSource::Synthetic(SyntheticMic::breaths(42)), &config) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let levels = mic.levels();
    let start = Instant::now();
    let mut latencies = Vec::new();
    while start.elapsed().as_secs_f64() < secs {
        match levels.recv_timeout(Duration::from_secs(1)) {
            Ok(l) => latencies.push(l.t.elapsed()),
            Err(e) => {
                eprintln!("error: no level within 1 s: {e}");
                std::process::exit(1);
            }
        }
    }
    let wall = start.elapsed();
    let cpu = mic.cpu_time();
    drop(levels);
    drop(mic);
    if latencies.is_empty() {
        eprintln!("error: no levels received");
        std::process::exit(1);
    }
    latencies.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let pct = |d: Duration| 100.0 * d.as_secs_f64() / wall.as_secs_f64();
    println!(
        "microphone (synthetic breaths, 16 kHz, 5 ms chunks, 20 ms blocks), {:.1} s, {} levels",
        wall.as_secs_f64(),
        latencies.len()
    );
    println!(
        "  capture latency (block end -> MicLevel received): median {:.0} us, p99 {:.0} us, max {:.0} us",
        us(percentile(&latencies, 0.5)),
        us(percentile(&latencies, 0.99)),
        us(latencies[latencies.len() - 1])
    );
    println!(
        "  CPU: level thread {:.3} % of one core ({:.1} us per block), synthetic source thread {:.3} %",
        pct(cpu.level_thread),
        us(cpu.level_thread) / latencies.len() as f64,
        pct(cpu.source)
    );
}
