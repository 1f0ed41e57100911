use super::*;
use std::sync::mpsc;

#[test]
fn join_returns_the_value_or_the_error_of_the_work() {
    let (tx, rx) = mpsc::channel::<()>();
    let work = Background::spawn(move || {
        rx.recv().ok();
        Ok(42)
    });
    assert!(!work.is_finished(), "the work waits for the channel");
    tx.send(()).unwrap();
    assert_eq!(work.join().unwrap(), 42);
    let failing: Background<()> = Background::spawn(|| Err(Error::invalid("nothing to do")));
    let err = failing.join().unwrap_err();
    assert_eq!(err.kind(), crate::generated::ErrorKind::InvalidArgument);
    assert_eq!(err.message(), "nothing to do");
}

#[test]
fn a_panic_of_the_work_is_resumed_by_join() {
    let work: Background<()> = Background::spawn(|| panic!("the work panicked"));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work.join()));
    let payload = caught.expect_err("join resumes the panic");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"the work panicked"));
}
