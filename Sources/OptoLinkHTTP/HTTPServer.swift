import CEpoll

/// SKELETON: the epoll HTTP/1.1 server.
public enum OptoLinkHTTPServerSkeleton {}
