package experiment

// An experiment file's network_model block runs in the event simulator of package
// async, which registers itself with the registry when it is linked
// (registry.RegisterSimulator).
import _ "github.com/tokendist/tokendist/async"
