//! Registries of components (schedulers, row policies, refresh managers, placement policies,
//! resctrl schemes, dynamic and migration policies, real-time schedules):
//! the built-in ones, one line each in a const list, plus any a program using the library adds
//! at run time with `register`, all found by name. Each component declares itself (name,
//! summary, needs, constructor) in its own file; nothing else names it.

use crate::error::{Error, Result};
use std::sync::RwLock;

/// What a registry needs of a component's declaration.
pub trait Component: Sync + 'static {
    fn name(&self) -> &'static str;
}

pub struct Registry<T: Component> {
    kind: &'static str,
    builtin: &'static [&'static T],
    added: RwLock<Vec<&'static T>>,
}

impl<T: Component> Registry<T> {
    pub const fn new(kind: &'static str, builtin: &'static [&'static T]) -> Self {
        Registry { kind, builtin, added: RwLock::new(Vec::new()) }
    }

    /// Every registered component: the built-in ones, then those added, in order.
    pub fn all(&self) -> Vec<&'static T> {
        let added = self.added.read().unwrap_or_else(|e| e.into_inner());
        self.builtin.iter().copied().chain(added.iter().copied()).collect()
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.all().into_iter().map(|c| c.name()).collect()
    }

    /// The component registered as `name`, or an error listing the registered names.
    pub fn get(&self, name: &str) -> Result<&'static T> {
        self.all().into_iter().find(|c| c.name() == name).ok_or_else(|| Error::unknown(self.kind, name, self.names()))
    }

    /// Adds a component; a name already registered is refused.
    pub fn register(&self, component: &'static T) -> Result<()> {
        if self.get(component.name()).is_ok() {
            return Err(Error::config(self.kind, format!("\"{}\" is registered already", component.name())));
        }
        self.added.write().unwrap_or_else(|e| e.into_inner()).push(component);
        Ok(())
    }
}
