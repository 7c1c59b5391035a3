//! [`Plan`]: the all-pairs passes a [`Radius`] needs, and which pairs each
//! pass accepts. The one-machine batch ([`Dedup::batch`](crate::dedup::Dedup::batch)),
//! the keyed index, the service and the Spark job run the same plan, so
//! they find the same pairs.

use super::Radius;

/// One all-pairs pass: every pair within `k` bits among the documents with
/// fewer than `below` features (all documents when `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    /// The radius the pass searches.
    pub k: u32,
    /// Only documents with fewer features than this take part (`None`: all).
    pub below: Option<usize>,
}

impl Pass {
    /// Whether a document of `features` features takes part.
    pub fn includes(&self, features: usize) -> bool {
        self.below.is_none_or(|b| features < b)
    }
}

/// The passes of a radius: pass 0 at its smallest k over every document,
/// then one pass per larger k over the documents short enough for it
/// (a step's k applies to pairs whose longer document has fewer than twice
/// the step's features; see [`Radius::k_for_pair`]).
///
/// Each near-duplicate pair is accepted by exactly one pass: pass 0 takes
/// every pair it finds; a later pass takes a pair only when its distance
/// is beyond the smallest k and the pair's own radius is that pass's k.
///
/// ```
/// use neardup::radius::{Pass, Plan};
/// use neardup::Radius;
///
/// let plan = Plan::new(&Radius::by_length(&[(600, 8)], 4));
/// assert_eq!(plan.passes(), [Pass { k: 4, below: None }, Pass { k: 8, below: Some(1200) }]);
/// assert!(plan.accepts(0, 3, 5000, 5000));
/// assert!(plan.accepts(1, 7, 100, 200) && !plan.accepts(1, 7, 100, 1300) && !plan.accepts(1, 3, 10, 10));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    radius: Radius,
    passes: Vec<Pass>,
}

impl Plan {
    /// The plan of `radius`.
    pub fn new(radius: &Radius) -> Plan {
        let min_k = radius.min_k();
        let (steps, rest) = radius.steps();
        let mut passes = vec![Pass { k: min_k, below: None }];
        let mut ks: Vec<u32> = steps.iter().map(|s| s.1).chain([rest]).filter(|&k| k > min_k).collect();
        ks.sort_unstable();
        ks.dedup();
        for k in ks {
            let below =
                if rest == k { None } else { steps.iter().filter(|s| s.1 == k).map(|s| 2 * s.0).max() };
            passes.push(Pass { k, below });
        }
        Plan { radius: radius.clone(), passes }
    }

    /// The radius planned for.
    pub fn radius(&self) -> &Radius {
        &self.radius
    }

    /// The passes, pass 0 first.
    pub fn passes(&self) -> &[Pass] {
        &self.passes
    }

    /// Whether pass `pass` keeps a pair it found at `distance` between
    /// documents of `a` and `b` features.
    pub fn accepts(&self, pass: usize, distance: u32, a: usize, b: usize) -> bool {
        let min_k = self.passes[0].k;
        if pass == 0 {
            return distance <= min_k;
        }
        let want = self.radius.k_for_pair(a, b);
        distance > min_k && distance <= want && want == self.passes[pass].k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair the radius accepts is accepted by exactly one pass that
    /// can find it, for fixed, shrinking and growing radii.
    #[test]
    fn each_accepted_pair_has_exactly_one_pass() {
        let radii = [
            Radius::fixed(3),
            Radius::by_length(&[(600, 8)], 4),
            Radius::by_length(&[(50, 12), (600, 8)], 4),
            Radius::by_length(&[(100, 2)], 5),
            Radius::by_length(&[(100, 6), (300, 6)], 2),
        ];
        for r in &radii {
            let plan = Plan::new(r);
            for a in (0..1500).step_by(37) {
                for b in (0..1500).step_by(41) {
                    for d in 0..16 {
                        let found_by: Vec<usize> = (0..plan.passes().len())
                            .filter(|&p| {
                                let pass = plan.passes()[p];
                                pass.includes(a)
                                    && pass.includes(b)
                                    && d <= pass.k
                                    && plan.accepts(p, d, a, b)
                            })
                            .collect();
                        let want = usize::from(r.accepts(d, a, b));
                        assert_eq!(found_by.len(), want, "{r}: d {d}, features {a} and {b}: {found_by:?}");
                    }
                }
            }
        }
    }
}
