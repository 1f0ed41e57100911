use super::*;

#[test]
fn layouts_with_a_parameter_past_the_block_are_refused() {
    let p = |offset, size| ParamInfo { offset, size };
    assert!(Layout::new(vec![p(0, 4), p(8, 8)], 16).is_some());
    assert!(Layout::new(vec![], 0).is_some());
    assert!(Layout::new(vec![p(0, 4), p(8, 8)], 15).is_none());
    assert!(Layout::new(vec![p(usize::MAX, 2)], 16).is_none());
}
