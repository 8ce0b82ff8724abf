//! What a search decodes from a segment once and keeps while the segment lives: the filter
//! and facet columns (`ordinals`) and, with the semantic option, the records' vectors
//! (`semantic`). Segments never change (a merge makes a new one), so nothing here goes stale;
//! the caller forgets the segments its searcher no longer holds ([`SegmentCache::retain`]).
//!
//! Each segment has its own slot, locked while its value is made: searches that meet a new
//! segment together wait for one decoding instead of each doing it (right after a commit,
//! when every search meets the new segment), and searches of other segments never wait.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tantivy::index::SegmentId;

/// One slot per segment.
type Slot<T> = Arc<Mutex<Option<Arc<T>>>>;

/// A value per segment, made on first use.
#[derive(Debug)]
pub(crate) struct SegmentCache<T> {
    segments: Mutex<HashMap<SegmentId, Slot<T>>>,
}

impl<T> Default for SegmentCache<T> {
    fn default() -> SegmentCache<T> {
        SegmentCache {
            segments: Mutex::default(),
        }
    }
}

impl<T> SegmentCache<T> {
    /// Returns the value of segment `id`: the one kept, when `fits` accepts it, else one
    /// made by `make` and kept. A failure is returned and nothing is kept.
    pub(crate) fn get_or_make<E>(
        &self,
        id: SegmentId,
        fits: impl FnOnce(&T) -> bool,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        let slot = Arc::clone(lock(&self.segments).entry(id).or_default());
        let mut value = lock(&slot);
        if let Some(kept) = value.as_ref()
            && fits(kept)
        {
            return Ok(Arc::clone(kept));
        }
        let made = Arc::new(make()?);
        *value = Some(Arc::clone(&made));
        Ok(made)
    }

    /// Forgets the segments not in `live` (after merges and deletes).
    pub(crate) fn retain(&self, live: &[SegmentId]) {
        lock(&self.segments).retain(|id, _| live.contains(id));
    }

    /// How many segments have a slot.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.segments).len()
    }
}

/// Locks `mutex`; a panic in another holder leaves data that is still whole (a map, or a
/// value set in one assignment), so poisoning is ignored.
fn lock<V>(mutex: &Mutex<V>) -> MutexGuard<'_, V> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn segment_ids(count: usize) -> Vec<SegmentId> {
        (0..count).map(|_| SegmentId::generate_random()).collect()
    }

    #[test]
    fn searches_meeting_a_new_segment_together_decode_it_once() {
        let cache: SegmentCache<usize> = SegmentCache::default();
        let [id] = segment_ids(1)[..] else {
            unreachable!()
        };
        let made = AtomicUsize::new(0);
        let threads = 8;
        let barrier = Barrier::new(threads);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    barrier.wait();
                    let value = cache
                        .get_or_make(
                            id,
                            |_| true,
                            || {
                                made.fetch_add(1, Ordering::SeqCst);
                                std::thread::sleep(std::time::Duration::from_millis(20));
                                Ok::<_, ()>(42)
                            },
                        )
                        .unwrap();
                    assert_eq!(*value, 42);
                });
            }
        });
        assert_eq!(made.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_failure_keeps_nothing_and_a_misfit_is_made_again() {
        let cache: SegmentCache<usize> = SegmentCache::default();
        let [id] = segment_ids(1)[..] else {
            unreachable!()
        };
        assert_eq!(
            cache.get_or_make(id, |_| true, || Err("broken")),
            Err("broken")
        );
        let first = cache.get_or_make(id, |_| true, || Ok::<_, ()>(1)).unwrap();
        assert_eq!(*first, 1);
        let kept = cache.get_or_make(id, |_| true, || Ok::<_, ()>(2)).unwrap();
        assert_eq!(*kept, 1);
        let remade = cache
            .get_or_make(id, |value| *value == 3, || Ok::<_, ()>(3))
            .unwrap();
        assert_eq!(*remade, 3);
    }

    #[test]
    fn segments_left_out_of_the_live_ones_are_forgotten() {
        let cache: SegmentCache<usize> = SegmentCache::default();
        let ids = segment_ids(3);
        for id in &ids {
            cache.get_or_make(*id, |_| true, || Ok::<_, ()>(0)).unwrap();
        }
        assert_eq!(cache.len(), 3);
        cache.retain(&ids[1..2]);
        assert_eq!(cache.len(), 1);
    }
}
