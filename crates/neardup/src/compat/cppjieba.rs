//! The keyword order of cppjieba's `KeywordExtractor::Extract`, which
//! yanyiwu/simhash hashes: keywords in `std::map` (byte) order, then
//! `std::partial_sort` by descending weight, as libstdc++ implements it.
//!
//! When weights tie at the top-N boundary, which keywords survive depends
//! on the heap algorithm, so it is reproduced step by step here
//! (`__heap_select` then `__sort_heap`, from libstdc++'s `stl_heap.h` and
//! `stl_algo.h`).

/// Reorders `items` as `std::partial_sort(first, first + k, last, greater)`
/// does and truncates to `k`. `weight` gives the sort key.
pub(crate) fn partial_sort_desc<T>(items: &mut Vec<T>, k: usize, weight: impl Fn(&T) -> f64) {
    let k = k.min(items.len());
    // comp(a, b) = a.weight > b.weight: the heap keeps the *smallest* on top.
    let comp = |a: &T, b: &T| weight(a) > weight(b);
    if k > 0 {
        make_heap(&mut items[..k], &comp);
        for i in k..items.len() {
            if comp(&items[i], &items[0]) {
                // __pop_heap(first, middle, i): move *i into the heap's root slot.
                items.swap(0, i);
                let len = k;
                adjust_heap(&mut items[..len], 0, &comp);
            }
        }
        // __sort_heap(first, middle)
        let mut last = k;
        while last > 1 {
            last -= 1;
            items.swap(0, last);
            adjust_heap(&mut items[..last], 0, &comp);
        }
    }
    items.truncate(k);
}

/// libstdc++ `__make_heap`.
fn make_heap<T>(v: &mut [T], comp: &impl Fn(&T, &T) -> bool) {
    let len = v.len();
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        adjust_heap(v, parent, comp);
        if parent == 0 {
            return;
        }
        parent -= 1;
    }
}

/// libstdc++ `__adjust_heap(first, hole, len, value)` where `value` is the
/// element currently at `hole`: sift the hole down to a leaf along the
/// larger children, then push the value back up (`__push_heap`).
fn adjust_heap<T>(v: &mut [T], hole: usize, comp: &impl Fn(&T, &T) -> bool) {
    let len = v.len();
    let top = hole;
    let mut hole = hole;
    let mut child = hole;
    // The moving value rides along with swaps; it stays at `hole`.
    while child < (len.saturating_sub(1)) / 2 {
        child = 2 * (child + 1);
        if comp(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v.swap(hole, child);
        hole = child;
    }
    if len >= 2 && (len & 1) == 0 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v.swap(hole, child - 1);
        hole = child - 1;
    }
    // __push_heap(first, hole, top, value)
    while hole > top {
        let parent = (hole - 1) / 2;
        if comp(&v[parent], &v[hole]) {
            v.swap(hole, parent);
            hole = parent;
        } else {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_descending_and_truncates() {
        let mut v = vec![3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0];
        partial_sort_desc(&mut v, 3, |&x| x);
        assert_eq!(v, vec![9.0, 6.0, 5.0]);
        let mut v = vec![3.0, 1.0, 4.0];
        partial_sort_desc(&mut v, 10, |&x| x);
        assert_eq!(v, vec![4.0, 3.0, 1.0]);
    }

    #[test]
    fn ties_follow_libstdcxx() {
        // 500 cases with many ties, and what g++ 12's libstdc++ made of them:
        // `n k w_0 … w_{n-1} | ids of the first min(k, n) after
        // std::partial_sort(…, [](a, b) { return a.w > b.w; })`.
        for line in include_str!("partial_sort_cases.txt").lines() {
            let (head, want) = line.split_once(" |").unwrap();
            let nums: Vec<usize> = head.split_whitespace().map(|x| x.parse().unwrap()).collect();
            let (n, k) = (nums[0], nums[1]);
            let mut v: Vec<(usize, f64)> = (0..n).map(|i| (i, nums[2 + i] as f64)).collect();
            partial_sort_desc(&mut v, k, |x| x.1);
            let got: Vec<usize> = v.iter().map(|x| x.0).collect();
            let want: Vec<usize> = want.split_whitespace().map(|x| x.parse().unwrap()).collect();
            assert_eq!(got, want, "case {line}");
        }
    }
}
