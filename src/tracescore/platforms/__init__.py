"""One folder per trace platform (client, source, adapter, sink, settings), each registered in ``registry``."""
