//! Six-lane `f64` arithmetic for the 6 × 6 block kernels of [`super::block_cholesky`], with
//! an AVX2 implementation chosen at run time and a portable one.
//!
//! A block row of the coupled system is six numbers, which SSE2 (the x86-64 baseline) covers
//! in three registers and AVX2 in two (4 + 2 lanes). A kernel is written once, generic over
//! [`SixLanes`] ([`LaneKernel`]), and [`run`] compiles it twice: inside a
//! `#[target_feature(enable = "avx2")]` function with the AVX2 lanes, taken when the CPU has
//! them, and with [`Portable`] ones otherwise. The choice, and the one `unsafe` call it needs,
//! are made here only.
//!
//! Both implementations do the same IEEE operations lane by lane: an add, a subtract or a
//! multiply of two lanes, never a fused multiply-add or a horizontal sum. So the two paths give
//! bit-identical results, and a run is reproducible from one machine to another whether or not
//! its CPU has AVX2.

use super::block_cholesky::Lanes;

/// Lane-wise arithmetic on six `f64` values. Every method is one IEEE operation per lane.
pub trait SixLanes: Copy {
    /// Six values in registers.
    type V: Copy;
    /// Loads a row.
    fn load(x: &Lanes) -> Self::V;
    /// Stores a row.
    fn store(v: Self::V, x: &mut Lanes);
    /// All lanes `x`.
    fn splat(x: f64) -> Self::V;
    /// Lane-wise `a + b`.
    fn add(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise `a − b`.
    fn sub(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise `a · b`.
    fn mul(a: Self::V, b: Self::V) -> Self::V;
    /// Each lane of `v` spread over all six, without a trip through memory.
    fn spread(v: Self::V) -> [Self::V; 6];
}

/// Plain arrays; the compiler vectorises them with whatever the build targets.
#[derive(Clone, Copy, Debug)]
pub struct Portable;

impl SixLanes for Portable {
    type V = Lanes;

    #[inline(always)]
    fn load(x: &Lanes) -> Lanes {
        *x
    }

    #[inline(always)]
    fn store(v: Lanes, x: &mut Lanes) {
        *x = v;
    }

    #[inline(always)]
    fn splat(x: f64) -> Lanes {
        [x; 6]
    }

    #[inline(always)]
    fn add(a: Lanes, b: Lanes) -> Lanes {
        std::array::from_fn(|k| a[k] + b[k])
    }

    #[inline(always)]
    fn sub(a: Lanes, b: Lanes) -> Lanes {
        std::array::from_fn(|k| a[k] - b[k])
    }

    #[inline(always)]
    fn mul(a: Lanes, b: Lanes) -> Lanes {
        std::array::from_fn(|k| a[k] * b[k])
    }

    #[inline(always)]
    fn spread(v: Lanes) -> [Lanes; 6] {
        v.map(|x| [x; 6])
    }
}

/// A computation on six-lane vectors, for [`run`].
pub trait LaneKernel {
    /// What it returns.
    type Output;
    /// Runs it with the lanes `L` (to be `#[inline(always)]`, so that it is compiled into the
    /// AVX2 function that [`run`] calls it from).
    fn run<L: SixLanes>(self) -> Self::Output;
}

/// Runs `kernel` with AVX2 lanes where the CPU has them, else with [`Portable`] ones; both
/// give the same results. `AR_MULTIBODY_NO_AVX2` set in the environment before the first run
/// chooses the portable lanes, to compare the two.
#[inline]
pub fn run<K: LaneKernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if avx2_available() {
        // SAFETY: the CPU has AVX2.
        return unsafe { run_avx2(kernel) };
    }
    kernel.run::<Portable>()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2<K: LaneKernel>(kernel: K) -> K::Output {
    kernel.run::<Avx2>()
}

/// One 256-bit and one 128-bit register. Only used by [`run_avx2`], compiled with AVX2
/// enabled and called once the CPU is known to have it: the methods are inlined there, where
/// the intrinsics are valid.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
struct Avx2;

#[cfg(target_arch = "x86_64")]
mod avx2_impl {
    use super::{Avx2, Lanes, SixLanes};
    use std::arch::x86_64::{
        __m128d, __m256d, _mm256_add_pd, _mm256_broadcastsd_pd, _mm256_castpd256_pd128,
        _mm256_loadu_pd, _mm256_mul_pd, _mm256_permute4x64_pd, _mm256_set1_pd, _mm256_storeu_pd,
        _mm256_sub_pd, _mm_add_pd, _mm_loadu_pd, _mm_mul_pd, _mm_set1_pd, _mm_storeu_pd,
        _mm_sub_pd, _mm_unpackhi_pd,
    };

    // SAFETY (all methods): `Avx2` is only used inside `run_avx2`, compiled with AVX2 enabled
    // and only called once `avx2_available()` has returned true; the loads and stores
    // read and write lanes 0..4 and 4..6 of a six-element array.
    impl SixLanes for Avx2 {
        type V = (__m256d, __m128d);

        #[inline(always)]
        fn load(x: &Lanes) -> Self::V {
            unsafe { (_mm256_loadu_pd(x.as_ptr()), _mm_loadu_pd(x.as_ptr().add(4))) }
        }

        #[inline(always)]
        fn store(v: Self::V, x: &mut Lanes) {
            unsafe {
                _mm256_storeu_pd(x.as_mut_ptr(), v.0);
                _mm_storeu_pd(x.as_mut_ptr().add(4), v.1);
            }
        }

        #[inline(always)]
        fn splat(x: f64) -> Self::V {
            unsafe { (_mm256_set1_pd(x), _mm_set1_pd(x)) }
        }

        #[inline(always)]
        fn add(a: Self::V, b: Self::V) -> Self::V {
            unsafe { (_mm256_add_pd(a.0, b.0), _mm_add_pd(a.1, b.1)) }
        }

        #[inline(always)]
        fn sub(a: Self::V, b: Self::V) -> Self::V {
            unsafe { (_mm256_sub_pd(a.0, b.0), _mm_sub_pd(a.1, b.1)) }
        }

        #[inline(always)]
        fn mul(a: Self::V, b: Self::V) -> Self::V {
            unsafe { (_mm256_mul_pd(a.0, b.0), _mm_mul_pd(a.1, b.1)) }
        }

        #[inline(always)]
        fn spread(v: Self::V) -> [Self::V; 6] {
            unsafe {
                let wide = |x: __m256d| (x, _mm256_castpd256_pd128(x));
                [
                    wide(_mm256_permute4x64_pd::<0x00>(v.0)),
                    wide(_mm256_permute4x64_pd::<0x55>(v.0)),
                    wide(_mm256_permute4x64_pd::<0xAA>(v.0)),
                    wide(_mm256_permute4x64_pd::<0xFF>(v.0)),
                    wide(_mm256_broadcastsd_pd(v.1)),
                    wide(_mm256_broadcastsd_pd(_mm_unpackhi_pd(v.1, v.1))),
                ]
            }
        }
    }
}

/// Whether [`run`] takes the AVX2 lanes (checked once, then cached).
/// `AR_MULTIBODY_NO_AVX2` set in the environment at the first call turns them off, to compare
/// the two paths.
#[cfg(target_arch = "x86_64")]
#[inline]
fn avx2_available() -> bool {
    use std::sync::OnceLock;
    static CHOICE: OnceLock<bool> = OnceLock::new();
    *CHOICE.get_or_init(|| {
        std::arch::is_x86_feature_detected!("avx2")
            && std::env::var_os("AR_MULTIBODY_NO_AVX2").is_none()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Ops<'a>(&'a Lanes, &'a Lanes);

    impl LaneKernel for Ops<'_> {
        type Output = Lanes;

        #[inline(always)]
        fn run<L: SixLanes>(self) -> Lanes {
            let (va, vb) = (L::load(self.0), L::load(self.1));
            let mut out = [0.0; 6];
            L::store(L::sub(L::add(L::mul(va, vb), L::splat(0.1)), vb), &mut out);
            out
        }
    }

    #[test]
    fn the_lanes_run_chooses_round_like_the_portable_ones() {
        let a = [1.0 / 3.0, -2.5e-9, 7.0, 1e300, -0.0, 0.3];
        let b = [0.7, 3.0e8, -1.0 / 7.0, 1e10, 2.0, 0.1];
        let expect: Lanes = std::array::from_fn(|k| a[k] * b[k] + 0.1 - b[k]);
        let portable = Ops(&a, &b).run::<Portable>();
        assert_eq!(portable.map(f64::to_bits), expect.map(f64::to_bits));
        // AVX2 on this machine, most likely.
        let chosen = run(Ops(&a, &b));
        assert_eq!(chosen.map(f64::to_bits), expect.map(f64::to_bits));
        #[cfg(target_arch = "x86_64")]
        if avx2_available() {
            // SAFETY: checked just above.
            let avx2 = unsafe { run_avx2(Ops(&a, &b)) };
            assert_eq!(avx2.map(f64::to_bits), expect.map(f64::to_bits));
        }
    }
}
