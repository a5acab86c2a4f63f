//! Shared by the convergence tests: the solver's parameters at a step h, the fitted order of
//! an error table and its printout, and the assertion on order and measured errors.

use ar_dynamics::SolverParams;

pub fn params(h: f64) -> SolverParams {
    SolverParams {
        dt_secs: h,
        ..SolverParams::default()
    }
}

/// Least-squares slope of ln(error) against ln(h).
pub fn fitted_order(hs: &[f64], errors: &[f64]) -> f64 {
    let xs: Vec<f64> = hs.iter().map(|h| h.ln()).collect();
    let ys: Vec<f64> = errors.iter().map(|e| e.ln()).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mx, my) = (mean(&xs), mean(&ys));
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    sxy / xs.iter().map(|x| (x - mx) * (x - mx)).sum::<f64>()
}

/// Prints an error table, each column with its local orders, and returns the fitted orders.
pub fn report(title: &str, hs: &[f64], columns: &[(&str, &[f64])]) -> Vec<f64> {
    println!("{title}");
    print!("{:>8}", "h (ms)");
    for (name, _) in columns {
        print!("{name:>24}");
    }
    println!();
    for (i, h) in hs.iter().enumerate() {
        print!("{:>8.3}", h * 1e3);
        for (_, e) in columns {
            let local = match i {
                0 => String::new(),
                _ => format!("{:.2}", (e[i - 1] / e[i]).log2()),
            };
            print!("{:>14.3e}{local:>10}", e[i]);
        }
        println!();
    }
    let orders: Vec<f64> = columns.iter().map(|(_, e)| fitted_order(hs, e)).collect();
    print!("{:>8}", "order");
    orders.iter().for_each(|o| print!("{o:>24.2}"));
    println!("\n");
    orders
}

/// Asserts the fitted order and that each error is within 2× of the one measured.
pub fn assert_converges(what: &str, order: f64, errors: &[f64], measured: &[f64]) {
    assert!(order >= 1.8, "{what}: order {order:.2} < 1.8 ({errors:?})");
    for (e, m) in errors.iter().zip(measured) {
        assert!(*e <= 2.0 * m, "{what}: error {e:.3e} > twice {m:.3e}");
    }
}
