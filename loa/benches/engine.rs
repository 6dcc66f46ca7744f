//! Criterion benches of the engine's hot paths: move generation, move counting, making a
//! move, and the connection test, over positions from the first plies of the standard game.

// criterion_group!/criterion_main! generate undocumented items.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use loa::{Color, MoveList, Position, Rules, Variant};

fn positions() -> Vec<Position> {
    let rules = Rules::classic();
    let start = Position::start(Variant::Standard, &rules);
    let mut out = Vec::new();
    for &a in start.legal_moves(&rules).iter() {
        let p1 = start.after(a);
        for &b in p1.legal_moves(&rules).iter().step_by(3) {
            let p2 = p1.after(b);
            for &c in p2.legal_moves(&rules).iter().step_by(5) {
                out.push(p2.after(c));
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let ps = positions();
    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Elements(ps.len() as u64));
    group.bench_function("generate_moves", |b| {
        let mut list = MoveList::new();
        b.iter(|| {
            let mut n = 0;
            for p in &ps {
                list.clear();
                p.generate_moves(&mut list);
                n += list.len();
            }
            black_box(n)
        })
    });
    group.bench_function("count_moves", |b| {
        b.iter(|| ps.iter().map(|p| p.count_moves()).sum::<u32>())
    });
    let first_moves: Vec<_> = ps
        .iter()
        .map(|p| p.legal_moves(&Rules::classic())[0])
        .collect();
    group.bench_function("make_move", |b| {
        b.iter(|| {
            let mut h = 0u64;
            for (p, &m) in ps.iter().zip(&first_moves) {
                h ^= black_box(p).after(m).hash();
            }
            h
        })
    });
    group.bench_function("connection_test", |b| {
        b.iter(|| {
            ps.iter()
                .filter(|p| black_box(*p).is_connected(Color::Black))
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
