use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Counts its drops.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Calls the trampoline as the library would, with a `size`-byte
/// message buffer: its return value and the message written.
fn call<F, E>(f: F, size: usize) -> (i32, String)
where
    F: FnOnce() -> std::result::Result<(), E> + Send + 'static,
    E: fmt::Display,
{
    let data = Box::into_raw(Box::new(f)).cast::<c_void>();
    let mut buf = vec![0x55u8; size.max(1)];
    let ret = unsafe { host_trampoline::<F, E>(data, buf.as_mut_ptr().cast(), size) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(0);
    (ret, String::from_utf8(buf[..end].to_vec()).expect("UTF-8"))
}

#[test]
fn the_trampoline_runs_the_closure_once_and_frees_it() {
    let (ran, drops) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (r, d) = (Arc::clone(&ran), Dropped(Arc::clone(&drops)));
    let (ret, message) = call(
        move || -> std::result::Result<(), String> {
            let _keep = &d;
            r.fetch_add(1, Ordering::SeqCst);
            Ok(())
        },
        64,
    );
    assert_eq!((ret, message.as_str()), (0, ""));
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_eq!(drops.load(Ordering::SeqCst), 1, "freed once, after it ran");
}

#[test]
fn errors_and_panics_become_the_message() {
    let (ret, message) = call(|| Err::<(), _>("checksum mismatch at 7"), 64);
    assert_eq!((ret, message.as_str()), (1, "checksum mismatch at 7"));

    let drops = Arc::new(AtomicUsize::new(0));
    let d = Dropped(Arc::clone(&drops));
    let (ret, message) = call(
        move || -> std::result::Result<(), String> {
            let _keep = &d;
            panic!("bad value {}", 42)
        },
        64,
    );
    assert_eq!(ret, 1);
    assert_eq!(message, "host function panicked: bad value 42");
    assert_eq!(drops.load(Ordering::SeqCst), 1, "freed once after a panic");

    let (_, message) = call(
        || -> std::result::Result<(), String> { std::panic::panic_any(7u8) },
        128,
    );
    assert!(message.starts_with("host function panicked: "), "{message}");

    // An error whose Display panics is caught too.
    struct Bad;
    impl fmt::Display for Bad {
        fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
            panic!("display failed")
        }
    }
    let (ret, message) = call(|| Err::<(), _>(Bad), 64);
    assert_eq!(
        (ret, message.as_str()),
        (1, "host function panicked: display failed")
    );
}

#[test]
fn long_messages_are_cut_at_a_character_boundary() {
    // 'é' is two bytes: 9 bytes of room hold "abc" and three 'é' (9 bytes
    // with the NUL would need 10), so the text is cut before the third.
    let (ret, message) = call(|| Err::<(), _>("abcééé"), 9);
    assert_eq!((ret, message.as_str()), (1, "abcéé"));
    let (ret, message) = call(|| Err::<(), _>("abc"), 1);
    assert_eq!((ret, message.as_str()), (1, ""));
    // No room at all: nothing is written, the failure still reported.
    type Failing = fn() -> std::result::Result<(), &'static str>;
    let failing: Failing = || Err("x");
    let data = Box::into_raw(Box::new(failing)).cast::<c_void>();
    let ret = unsafe { host_trampoline::<Failing, &str>(data, std::ptr::null_mut(), 0) };
    assert_eq!(ret, 1);
}

#[test]
fn a_host_node_keeps_its_closure_and_a_refusal_frees_it_at_once() {
    type NodeFn = Box<dyn Fn() -> std::result::Result<(), String> + Send + Sync>;
    let drops = Arc::new(AtomicUsize::new(0));
    let d = Dropped(Arc::clone(&drops));
    let f: NodeFn = Box::new(move || {
        let _keep = &d;
        Ok(())
    });
    let refused = give_host_node_fn(f, |_, _| {
        Err::<(), _>(Error::new(sys::CUABI_ERROR_INVALID_ARGUMENT, "refused"))
    });
    assert_eq!(refused.unwrap_err().message(), "refused");
    assert_eq!(drops.load(Ordering::SeqCst), 1, "freed once when refused");

    // Taken: the node holds it, and calls it through the trampoline.
    let (ran, drops) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (r, d) = (Arc::clone(&ran), Dropped(Arc::clone(&drops)));
    let f: NodeFn = Box::new(move || {
        let _keep = &d;
        r.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    let mut held = std::ptr::null_mut();
    give_host_node_fn(f, |call, data| {
        held = data;
        let call = call.expect("a trampoline");
        for _ in 0..2 {
            assert_eq!(unsafe { call(data, std::ptr::null_mut(), 0) }, 0);
        }
        Ok(())
    })
    .expect("taken");
    assert_eq!(ran.load(Ordering::SeqCst), 2, "called at every launch");
    assert_eq!(drops.load(Ordering::SeqCst), 0, "kept while taken");
    // SAFETY: no node holds it in this test; free it as the node never does.
    drop(unsafe { Box::from_raw(held.cast::<NodeFn>()) });
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn a_refused_launch_frees_the_closure_once_and_never_runs_it() {
    let (ran, drops) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (r, d) = (Arc::clone(&ran), Dropped(Arc::clone(&drops)));
    let result = unsafe {
        launch_host_func_raw(
            std::ptr::null_mut(),
            move || -> std::result::Result<(), String> {
                let _keep = &d;
                r.fetch_add(1, Ordering::SeqCst);
                Ok(())
            },
        )
    };
    let err = result.expect_err("a NULL stream is refused");
    assert_eq!(
        err.kind(),
        crate::generated::ErrorKind::InvalidHandle,
        "{err}"
    );
    assert!(
        err.message().contains("cuabi_stream_launch_host_func"),
        "{err}"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}
