use super::*;
use std::ffi::CString;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The trampoline as the library calls it: the closure sees the message,
/// a panic stops there, and a cleared slot calls nothing. (The library
/// itself calls it only once the context is lost: tests/health.rs, in a
/// process of its own, against the stand-in driver.)
#[test]
fn the_trampoline_calls_the_closure_and_catches_its_panic() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(AtomicUsize::new(0));
    let (log, count) = (Arc::clone(&seen), Arc::clone(&calls));
    on_context_lost(move |message| {
        count.fetch_add(1, Ordering::SeqCst);
        log.lock().unwrap().push(message.to_owned());
        if message == "panic" {
            panic!("the closure panics on purpose");
        }
    })
    .expect("registered");
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    for text in ["lost here", "panic", "after the panic"] {
        let c = CString::new(text).unwrap();
        // SAFETY: a NUL-terminated string, as the library passes.
        unsafe { trampoline(std::ptr::null_mut(), c.as_ptr()) };
    }
    // SAFETY: NULL is accepted.
    unsafe { trampoline(std::ptr::null_mut(), std::ptr::null()) };
    panic::set_hook(hook);
    assert_eq!(calls.load(Ordering::SeqCst), 4);
    assert_eq!(
        *seen.lock().unwrap(),
        ["lost here", "panic", "after the panic", ""]
    );

    clear_context_lost_callback().expect("cleared");
    let c = CString::new("cleared").unwrap();
    // SAFETY: as above.
    unsafe { trampoline(std::ptr::null_mut(), c.as_ptr()) };
    assert_eq!(
        calls.load(Ordering::SeqCst),
        4,
        "a cleared slot calls nothing"
    );
    // Its captures are freed once cleared: only this test's references remain.
    assert_eq!(Arc::strong_count(&calls), 1);
}
