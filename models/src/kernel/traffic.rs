//! What the memory system moves for a loop: the byte counts the traffic
//! terms price.

use serde::Serialize;

/// What the memory system moves for a loop, over all its iterations.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Traffic {
    /// Bytes read by the loop's loads (whole lines for strided access).
    pub load_bytes: f64,
    /// Bytes written back by its stores and updates.
    pub store_bytes: f64,
    /// Bytes read for ownership before stores (write-allocate).
    pub allocate_bytes: f64,
}

impl Traffic {
    /// Everything the memory bus carries: loads, allocate reads, stores.
    pub fn bus_bytes(&self) -> f64 {
        self.load_bytes + self.allocate_bytes + self.store_bytes
    }

    /// The loop's own count (loads + stores, no allocate reads).
    pub fn counted_bytes(&self) -> f64 {
        self.load_bytes + self.store_bytes
    }

    /// Sum of two traffics.
    pub fn plus(self, o: Traffic) -> Traffic {
        Traffic {
            load_bytes: self.load_bytes + o.load_bytes,
            store_bytes: self.store_bytes + o.store_bytes,
            allocate_bytes: self.allocate_bytes + o.allocate_bytes,
        }
    }

    /// This traffic scaled by `k`.
    pub fn times(self, k: f64) -> Traffic {
        Traffic {
            load_bytes: self.load_bytes * k,
            store_bytes: self.store_bytes * k,
            allocate_bytes: self.allocate_bytes * k,
        }
    }

    /// A streaming loop's traffic from the bytes it loads and stores, each
    /// stored byte costing one allocate read as well.
    pub fn streaming(load_bytes: f64, store_bytes: f64) -> Traffic {
        Traffic {
            load_bytes,
            store_bytes,
            allocate_bytes: store_bytes,
        }
    }
}
