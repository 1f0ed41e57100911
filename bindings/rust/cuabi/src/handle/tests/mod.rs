use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

static RELEASED: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

#[derive(Clone, Copy, Debug)]
struct Fake(usize);

impl Release for Fake {
    unsafe fn release(self) {
        RELEASED[self.0].fetch_add(1, Ordering::SeqCst);
    }
}

fn released(slot: usize) -> usize {
    RELEASED[slot].load(Ordering::SeqCst)
}

#[test]
fn drop_releases_exactly_once_wherever_the_owner_moved() {
    let owned = unsafe { Owned::new(Fake(0)) };
    let boxed = Box::new(owned);
    assert_eq!(released(0), 0, "moving does not release");
    drop(boxed);
    assert_eq!(released(0), 1);
    let owned = unsafe { Owned::new(Fake(1)) };
    std::thread::spawn(move || drop(owned)).join().unwrap();
    assert_eq!(released(1), 1, "dropped on another thread");
}

#[test]
fn into_raw_gives_the_handle_up_unreleased() {
    let owned = unsafe { Owned::new(Fake(3)) };
    let raw = owned.into_raw();
    assert_eq!((raw.0, released(3)), (3, 0), "not released");
    drop(unsafe { Owned::new(raw) });
    assert_eq!(released(3), 1);
}
