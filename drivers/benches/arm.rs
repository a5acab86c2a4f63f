//! Costs of the arm driver's per-packet work and of the simulated arm's inverse kinematics.
//!
//! `cargo bench -p ar-drivers --bench arm`. The streaming rate itself (packets per second
//! through the pty) is printed by `ar-multibody arm probe --stream`, not measured here.

use ar_drivers::arm::codec::{DataCommand, DataPacket, PacketParser};
use ar_drivers::arm::ik::{solve_tip, IkOptions};
use ar_drivers::arm::kinematics::tip_in_arm;
use ar_drivers::arm::params::{ArmParams, DhParams, Identity, MaxValues, RawDhParams};
use ar_drivers::arm::sim::REST_POSE_RAD;
use ar_drivers::arm::StylusSample;
use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::Vector3;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn params() -> ArmParams {
    let raw_dh = RawDhParams::microscribe_3dx();
    ArmParams {
        identity: Identity::microscribe_3dx(),
        max_values: MaxValues::microscribe_3dx(),
        raw_dh,
        dh: DhParams::from_raw(&raw_dh),
    }
}

fn stream(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            let c = (i * 37 % 0x4000) as u16;
            DataPacket {
                command: DataCommand::SIX_WITH_TIMER,
                buttons: (i % 4) as u8,
                timer_ticks: Some((i % 0x4000) as u16),
                counts: [c, c / 2, c / 3, c / 4, c / 5, 0, 0],
            }
            .encode()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let bytes = stream(1000);
    c.bench_function("parse 1000 packets (16 kB)", |b| {
        b.iter(|| {
            let mut parser = PacketParser::new(DataCommand::SIX_WITH_TIMER);
            let mut n = 0;
            parser.push(black_box(&bytes), |_| n += 1);
            n
        })
    });

    let params = params();
    let packet = DataPacket {
        command: DataCommand::SIX_WITH_TIMER,
        buttons: 1,
        timer_ticks: Some(77),
        counts: [1000, 2000, 3000, 400, 500, 0, 0],
    };
    let t = Instant::now();
    c.bench_function("packet to StylusSample (angles + FK)", |b| {
        b.iter(|| StylusSample::from_packet(black_box(&packet), &params, t, 0))
    });

    let dh = params.dh;
    let start = tip_in_arm(&dh, &REST_POSE_RAD);
    let near = start + Vector3::new(0.001, -0.001, 0.0005);
    let far = start + Vector3::new(0.08, 0.1, 0.05);
    let opts = IkOptions {
        rest_rad: Some(REST_POSE_RAD),
        ..IkOptions::default()
    };
    c.bench_function("IK 1 mm move to < 1e-12 m", |b| {
        b.iter(|| solve_tip(&dh, black_box(&near), &REST_POSE_RAD, 5, &opts))
    });
    c.bench_function("IK 14 cm move to < 1e-12 m", |b| {
        b.iter(|| solve_tip(&dh, black_box(&far), &REST_POSE_RAD, 5, &opts))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
