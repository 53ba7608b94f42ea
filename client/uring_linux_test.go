package client

func uringAvailable() error { return uringProbe() }
